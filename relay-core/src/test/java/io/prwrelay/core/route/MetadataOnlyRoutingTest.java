package io.prwrelay.core.route;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.sample;
import static io.prwrelay.testing.RawProto.series;
import static io.prwrelay.testing.RawProto.str;
import static io.prwrelay.testing.RawProto.varintField;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.core.encode.TenantBatch;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A PRW 1.0 request that carries only metadata (as Prometheus 2.x sends it) goes, entry by entry,
 * to the tenants whose series of that family the router saw, else to the default tenant; what is
 * routed and dropped is counted. Requests with series keep broadcasting.
 */
class MetadataOnlyRoutingTest {
  private static final long TTL = Duration.ofMinutes(10).toNanos();
  private final AtomicLong clock = new AtomicLong(5_000_000_000L);

  /** A metadata field: type, family name, help. */
  private static byte[] meta(String family, String help) {
    return len(3, varintField(1, 1), str(2, family), str(4, help));
  }

  private static byte[] seriesOf(String name, String tenant) {
    return series(label("__name__", name), label("service_id", tenant), sample(1, 1));
  }

  private TenantRouter router(TenantRules rules) {
    return new TenantRouter(rules, false, new MetricFamilies(1000, TTL, clock::get));
  }

  /** What each batch holds, by tenant; the counts checked by {@code check}. */
  private static Map<String, byte[]> route(
      TenantRouter router, byte[] request, java.util.function.Consumer<RouteResult> check) {
    return RouteAssertions.bytesByTenant(router, request, check);
  }

  private static Map<String, byte[]> route(TenantRouter router, byte[] request) {
    return route(router, request, r -> {});
  }

  @Test
  void eachEntryGoesToTheTenantsThatSentItsFamily() {
    TenantRouter router = router(TenantRules.builder().build());
    route(
        router,
        cat(
            seriesOf("http_requests_total", "a"),
            seriesOf("latency_seconds_bucket", "a"),
            seriesOf("latency_seconds_bucket", "b"),
            seriesOf("latency_seconds_count", "b"),
            seriesOf("queue_depth", "c")));
    byte[] requests = meta("http_requests_total", "Requests.");
    byte[] latency = meta("latency_seconds", "Latency.");
    byte[] queue = meta("queue_depth", "Depth.");
    byte[] unknown = meta("never_sent", "?");
    Map<String, byte[]> out =
        route(
            router,
            cat(requests, latency, queue, unknown),
            r -> {
              assertEquals(4, r.metadataIn());
              assertEquals(3, r.metadataRouted(MetadataRoute.FAMILY));
              assertEquals(1, r.metadataRouted(MetadataRoute.DEFAULT));
              assertEquals(0, r.metadataDropped());
              for (TenantBatch b : r.batches()) {
                assertEquals(0, b.series());
                assertEquals(b.tenant().equals("a") ? 2 : 1, b.metadata(), b.tenant());
              }
            });
    assertEquals(4, out.size());
    assertArrayEquals(cat(requests, latency), out.get("a"));
    assertArrayEquals(latency, out.get("b"));
    assertArrayEquals(queue, out.get("c"));
    assertArrayEquals(unknown, out.get("anonymous"));
  }

  @Test
  void everyFamilyOfALargeFleetIsLearned() {
    TenantRouter router =
        new TenantRouter(
            TenantRules.builder().build(), false, new MetricFamilies(100_000, TTL, clock::get));
    // 4 tenants × 6,000 families: more pairs than the learner's filter holds.
    byte[][] parts = new byte[24_000][];
    byte[][] metadata = new byte[6_000][];
    for (int f = 0; f < 6_000; f++) {
      for (int t = 0; t < 4; t++) {
        parts[t * 6_000 + f] = seriesOf("family_" + f + "_total", "t" + t);
      }
      metadata[f] = meta("family_" + f + "_total", "h");
    }
    route(router, cat(parts));
    route(router, cat(parts));
    byte[] all = cat(metadata);
    Map<String, byte[]> out =
        route(
            router,
            all,
            r -> {
              assertEquals(6_000, r.metadataRouted(MetadataRoute.FAMILY));
              for (TenantBatch b : r.batches()) {
                assertEquals(6_000, b.metadata(), b.tenant());
              }
            });
    assertEquals(java.util.Set.of("t0", "t1", "t2", "t3"), out.keySet());
    for (byte[] batch : out.values()) {
      assertArrayEquals(all, batch);
    }
  }

  @Test
  void aLoopThatSeesManyPairsStopsTeachingThemAgainWithinTheRefreshInterval() {
    MetricFamilies families = new MetricFamilies(1_000_000, TTL, clock::get);
    TenantRouter router = new TenantRouter(TenantRules.builder().build(), false, families);
    // 60,000 (family, tenant) pairs, far more than the learner's first filter (16,384).
    byte[][] parts = new byte[60_000][];
    for (int i = 0; i < parts.length; i++) {
      parts[i] = seriesOf("f" + (i / 3), "t" + (i % 3));
    }
    byte[] request = cat(parts);
    route(router, request);
    assertEquals(60_000, families.size());
    for (int round = 0; round < 6; round++) {
      route(router, request); // the filter grows while it pushes out pairs still fresh
    }
    long before = families.lessons();
    route(router, request);
    long taughtAgain = families.lessons() - before;
    assertTrue(taughtAgain < 600, "pairs taught again: " + taughtAgain);
  }

  @Test
  void seriesWithoutTenantTeachTheDefaultTenant() {
    TenantRouter router = router(TenantRules.builder().build());
    route(router, series(label("__name__", "orphan"), sample(1, 1)));
    byte[] m = meta("orphan", "h");
    assertArrayEquals(m, route(router, m).get("anonymous"));
  }

  @Test
  void unknownFamiliesAreDroppedAndCountedUnlessTheMissingPolicyIsDefault() {
    for (TenantRules.MissingPolicy missing :
        new TenantRules.MissingPolicy[] {
          TenantRules.MissingPolicy.DROP, TenantRules.MissingPolicy.REJECT
        }) {
      TenantRouter router = router(TenantRules.builder().missing(missing).build());
      route(router, seriesOf("known", "a"));
      byte[] known = meta("known", "h");
      Map<String, byte[]> out =
          route(
              router,
              cat(known, meta("unknown", "h")),
              r -> {
                assertEquals(1, r.metadataRouted(MetadataRoute.FAMILY));
                assertEquals(1, r.metadataDropped(MetadataDrop.UNKNOWN_FAMILY), missing.name());
              });
      assertEquals(Map.of("a", known).keySet(), out.keySet());
      assertArrayEquals(known, out.get("a"));
    }
  }

  @Test
  void requestsWithSeriesKeepBroadcastingToTheirOwnTenants() {
    TenantRouter router = router(TenantRules.builder().build());
    route(router, seriesOf("other_family", "z"));
    byte[] m = meta("other_family", "h");
    byte[] a = seriesOf("x", "a");
    Map<String, byte[]> out =
        route(router, cat(a, m), r -> assertEquals(1, r.metadataRouted(MetadataRoute.BROADCAST)));
    assertEquals(1, out.size());
    assertArrayEquals(cat(a, m), out.get("a"));
  }

  @Test
  void entriesPastTheFanOutBoundAreDroppedWhole() {
    byte[] first = meta("shared", "first");
    byte[] second = meta("shared", "second");
    TenantRouter router =
        router(TenantRules.builder().maxBroadcastMetadataBytes(2L * first.length + 1).build());
    route(router, cat(seriesOf("shared", "a"), seriesOf("shared", "b")));
    Map<String, byte[]> out =
        route(
            router,
            cat(first, second, meta("solo", "x")),
            r -> {
              assertEquals(1, r.metadataRouted(MetadataRoute.FAMILY));
              assertEquals(0, r.metadataRouted(MetadataRoute.DEFAULT));
              assertEquals(2, r.metadataDropped(MetadataDrop.MAX_BROADCAST_BYTES));
            });
    assertArrayEquals(first, out.get("a"));
    assertArrayEquals(first, out.get("b"));
    assertEquals(2, out.size(), "the later entries do not fit: " + out.keySet());
  }

  @Test
  void entriesWhoseTenantsWouldPassTheTenantBoundAreDropped() {
    TenantRouter router = router(TenantRules.builder().maxTenantsPerRequest(2).build());
    route(router, cat(seriesOf("two", "a"), seriesOf("two", "b")));
    route(router, cat(seriesOf("three", "c"), seriesOf("three", "a")));
    route(router, seriesOf("three", "b"));
    byte[] two = meta("two", "h");
    Map<String, byte[]> out =
        route(
            router,
            cat(two, meta("three", "h")),
            r -> assertEquals(1, r.metadataDropped(MetadataDrop.TOO_MANY_TENANTS)));
    assertEquals(2, out.size());
    assertArrayEquals(two, out.get("a"));
    assertArrayEquals(two, out.get("b"));
  }

  @Test
  void theDropPolicyDropsAndCountsEveryEntry() {
    TenantRouter router =
        router(TenantRules.builder().metadata(TenantRules.MetadataPolicy.DROP).build());
    route(router, seriesOf("up", "a"));
    Map<String, byte[]> out =
        route(
            router,
            cat(meta("up", "h"), meta("up", "h")),
            r -> assertEquals(2, r.metadataDropped(MetadataDrop.POLICY)));
    assertEquals(Map.of(), out);
  }

  @Test
  void withoutFamilyLearningEveryEntryGoesToTheDefaultTenant() {
    TenantRouter router = new TenantRouter(TenantRules.builder().maxFamilyTenants(0).build());
    route(router, seriesOf("up", "a"));
    byte[] m = meta("up", "h");
    assertEquals(Map.of("anonymous", m).keySet(), route(router, m).keySet());
  }

  @Test
  void anEntryWithoutAReadableFamilyNameIsOfAnUnknownFamily() {
    TenantRouter router = router(TenantRules.builder().build());
    route(router, seriesOf("up", "a"));
    byte[] noName = len(3, varintField(1, 1), str(4, "help only"));
    byte[] groupInside = len(3, new byte[] {0x1B}); // a start-group that never ends
    Map<String, byte[]> out = route(router, cat(noName, groupInside));
    assertArrayEquals(cat(noName, groupInside), out.get("anonymous"));
  }

  @Test
  void familiesAreFoundInUnusualSeriesEncodings() {
    TenantRouter router = router(TenantRules.builder().build());
    // Value before name, and a sample before the labels.
    byte[] valueFirst = len(1, str(2, "odd_family"), str(1, "__name__"));
    route(router, series(sample(1, 1), valueFirst, label("service_id", "a")));
    byte[] m = meta("odd_family", "h");
    assertArrayEquals(m, route(router, m).get("a"));
  }

  @Test
  void aTenantKeepsItsFamilyWhileItsSeriesKeepComing() {
    TenantRouter router = router(TenantRules.builder().build());
    byte[] s = seriesOf("up", "a");
    byte[] m = meta("up", "h");
    route(router, s); // taught at t0
    clock.addAndGet(TTL / 8);
    route(router, s); // within the refresh interval (TTL / 4): not taught again
    clock.addAndGet(TTL / 8 + 1);
    route(router, s); // taught again at t0 + TTL / 4 + 1
    clock.addAndGet(TTL - 1);
    assertEquals(Map.of("a", m).keySet(), route(router, m).keySet());
    clock.addAndGet(1);
    assertEquals(Map.of("anonymous", m).keySet(), route(router, m).keySet());
  }
}
