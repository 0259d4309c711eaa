package io.prwrelay.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.testing.Oracle;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The shared family → tenants map: which metric names make one family as Prometheus names it in its
 * metadata, its bound (least recently seen evicted), and its TTL, on a clock the test moves.
 */
class MetricFamiliesTest {
  private static final long TTL = Duration.ofMinutes(10).toNanos();
  private final AtomicLong clock = new AtomicLong(1_000_000_000L);

  private MetricFamilies families(int capacity) {
    return new MetricFamilies(capacity, TTL, clock::get);
  }

  private static void learn(MetricFamilies f, String seriesName, String tenant) {
    byte[] a = bytes(seriesName);
    f.learn(new long[] {MetricFamilies.familyKey(a, 0, a.length)}, new String[] {tenant}, 1);
  }

  private static void learn(MetricFamilies f, long sender, String seriesName, String tenant) {
    byte[] a = bytes(seriesName);
    f.learn(
        sender, new long[] {MetricFamilies.familyKey(a, 0, a.length)}, new String[] {tenant}, 1);
  }

  private static Set<String> tenantsOf(MetricFamilies f, long sender, String familyName) {
    byte[] a = bytes(familyName);
    List<String> out = new ArrayList<>();
    f.tenantsOf(sender, a, 0, a.length, out);
    return new TreeSet<>(out);
  }

  private static Set<String> tenantsOf(MetricFamilies f, String familyName) {
    byte[] a = bytes(familyName);
    List<String> out = new ArrayList<>();
    f.tenantsOf(a, 0, a.length, out);
    assertEquals(new HashSet<>(out).size(), out.size(), () -> "a tenant listed twice: " + out);
    return new TreeSet<>(out);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void metadataFamilyNamesFindTheTenantsOfTheirSeries() {
    MetricFamilies f = families(100);
    // Text-format counter: family and series both http_requests_total.
    learn(f, "http_requests_total", "a");
    // Histogram latency_seconds: its three series names went to three tenants.
    learn(f, "latency_seconds_bucket", "a");
    learn(f, "latency_seconds_sum", "b");
    learn(f, "latency_seconds_count", "c");
    // Summary rpc_seconds: quantile series carry the family name itself.
    learn(f, "rpc_seconds", "d");
    learn(f, "rpc_seconds_count", "e");
    // OpenMetrics counter jobs: series jobs_total; info build: series build_info.
    learn(f, "jobs_total", "f");
    learn(f, "build_info", "g");
    // A gauge whose name ends like a suffix, alone in its family.
    learn(f, "queue_gsum_x", "h");

    assertEquals(Set.of("a"), tenantsOf(f, "http_requests_total"));
    assertEquals(Set.of("a", "b", "c"), tenantsOf(f, "latency_seconds"));
    assertEquals(Set.of("d", "e"), tenantsOf(f, "rpc_seconds"));
    assertEquals(Set.of("f"), tenantsOf(f, "jobs"));
    assertEquals(Set.of("g"), tenantsOf(f, "build"));
    assertEquals(Set.of("h"), tenantsOf(f, "queue_gsum_x"));
    assertEquals(Set.of(), tenantsOf(f, "unknown_family"));
    assertEquals(Set.of(), tenantsOf(f, "latency"));
  }

  @Test
  void theFamilyKeyDropsOneKnownSuffixLikeTheOracle() {
    List<String> stems = List.of("", "a", "x_", "go", "node_cpu_seconds", "total", "_", "sum");
    List<String> suffixes =
        List.of(
            "",
            "_total",
            "_created",
            "_bucket",
            "_count",
            "_sum",
            "_gcount",
            "_gsum",
            "_info",
            "total",
            "_Total",
            "count",
            "_counts",
            "_bucket_x",
            "gsum");
    for (String stem : stems) {
      for (String suffix : suffixes) {
        String name = stem + suffix;
        // Offset into a larger array, so that the word reads see bytes on both sides.
        byte[] a = bytes("__" + name + "__");
        int want = Oracle.Families.stem(name).length();
        assertEquals(want, MetricFamilies.stemLength(a, 2, name.length()), () -> "stem of " + name);
      }
    }
  }

  @Test
  void aHistogramNamedLikeASuffixStillFindsItsSeries() {
    MetricFamilies f = families(100);
    learn(f, "jobs_count_bucket", "a");
    learn(f, "jobs_count_sum", "a");
    assertEquals(Set.of("a"), tenantsOf(f, "jobs_count"));
  }

  @Test
  void aFamilySentByManyTenantsListsEachOnce() {
    MetricFamilies f = families(10_000);
    for (int i = 0; i < 1000; i++) {
      learn(f, "go_goroutines", "t" + i);
      learn(f, "go_goroutines", "t" + i);
    }
    assertEquals(1000, tenantsOf(f, "go_goroutines").size());
    assertEquals(1000, f.size());
    assertEquals(1, f.families());
  }

  @Test
  void beyondTheBoundTheLeastRecentlySeenAssociationIsEvicted() {
    MetricFamilies f = families(3);
    learn(f, "a_total", "t1");
    clock.addAndGet(1);
    learn(f, "b", "t1");
    clock.addAndGet(1);
    learn(f, "c", "t1");
    clock.addAndGet(1);
    learn(f, "a_total", "t1"); // seen again: now the most recent
    clock.addAndGet(1);
    learn(f, "d", "t2"); // evicts b, the least recently seen
    assertEquals(3, f.size());
    assertEquals(Set.of("t1"), tenantsOf(f, "a_total"));
    assertEquals(Set.of(), tenantsOf(f, "b"));
    assertEquals(Set.of("t1"), tenantsOf(f, "c"));
    assertEquals(Set.of("t2"), tenantsOf(f, "d"));
  }

  @Test
  void anAssociationLastsForTheTtlAfterItWasLastSeen() {
    MetricFamilies f = families(100);
    learn(f, "up_total", "a");
    learn(f, "up_total", "b");
    clock.addAndGet(TTL / 2);
    learn(f, "up_total", "b");
    clock.addAndGet(TTL / 2 - 1);
    assertEquals(Set.of("a", "b"), tenantsOf(f, "up_total"));
    clock.addAndGet(1);
    assertEquals(Set.of("b"), tenantsOf(f, "up_total"));
    assertEquals(2, f.size(), "an expired association stays until the next update");
    learn(f, "other", "c");
    assertEquals(2, f.size(), "the next update removes it");
    clock.addAndGet(TTL);
    assertEquals(Set.of(), tenantsOf(f, "up_total"));
    learn(f, "other", "c");
    assertEquals(1, f.size());
    assertEquals(1, f.families());
  }

  @Test
  void capacityZeroLearnsNothing() {
    MetricFamilies f = families(0);
    learn(f, "up", "a");
    assertEquals(0, f.size());
    assertEquals(Set.of(), tenantsOf(f, "up"));
  }

  /**
   * Random learning, expiry and eviction against a plain reference model (an access-ordered map),
   * so that every table operation (probing, backward-shift deletion, growth, family chains) is
   * exercised on many shapes; the small capacity makes small tables, whose probe runs wrap around
   * their end.
   */
  @ParameterizedTest
  @ValueSource(ints = {20, 1500})
  void agreesWithAReferenceModelUnderRandomOperations(int capacity) {
    Random r = new Random(21);
    MetricFamilies f = families(capacity);
    // (family, tenant) -> last seen, least recently seen first.
    LinkedHashMap<List<String>, Long> model = new LinkedHashMap<>(16, 0.75f, true);
    for (int op = 0; op < 60_000; op++) {
      clock.addAndGet(r.nextInt(r.nextInt(50) == 0 ? 100_000 : 100) * 1_000_000L);
      String family = "fam_" + r.nextInt(capacity < 100 ? 12 : 400);
      String tenant = "t" + r.nextInt(r.nextBoolean() ? 4 : 40);
      learn(f, family + (r.nextBoolean() ? "_total" : ""), tenant);
      long now = clock.get();
      model.entrySet().removeIf(e -> now - e.getValue() >= TTL);
      model.put(List.of(family, tenant), now);
      if (model.size() > capacity) {
        Iterator<List<String>> it = model.keySet().iterator();
        it.next();
        it.remove();
      }
      if (op % 97 == 0 || capacity < 100) {
        assertEquals(model.size(), f.size(), "associations after op " + op);
        String probe = "fam_" + r.nextInt(capacity < 100 ? 12 : 400);
        Set<String> want = new TreeSet<>();
        for (Map.Entry<List<String>, Long> e : model.entrySet()) {
          if (e.getKey().get(0).equals(probe)) {
            want.add(e.getKey().get(1));
          }
        }
        assertEquals(want, tenantsOf(f, probe), "tenants of " + probe + " after op " + op);
      }
    }
    assertTrue(f.size() > capacity / 2, "the run filled the map: " + f.size());
  }

  @Test
  void eachSenderFindsOnlyTheTenantsItSentTheFamilyTo() {
    MetricFamilies f = families(100);
    learn(f, 11, "up", "a");
    learn(f, 22, "up", "b");
    learn(f, 22, "latency_seconds_bucket", "b");
    assertEquals(Set.of("a"), tenantsOf(f, 11, "up"));
    assertEquals(Set.of("b"), tenantsOf(f, 22, "up"));
    assertEquals(Set.of(), tenantsOf(f, 11, "latency_seconds"), "22's family, not 11's");
    assertEquals(Set.of(), tenantsOf(f, 33, "up"), "a sender that sent no series");
    assertEquals(1, f.heldBy(11));
    assertEquals(2, f.heldBy(22));
    assertEquals(2, f.senders());
  }

  @Test
  void beyondTheBoundTheSenderHoldingTheMostLosesItsLeastRecentlySeen() {
    MetricFamilies f = families(10);
    for (int i = 0; i < 3; i++) {
      learn(f, 1, "innocent_" + i, "mine");
      clock.addAndGet(1);
    }
    // A sender teaching a hundred families: it recycles its own associations.
    for (int i = 0; i < 100; i++) {
      learn(f, 2, "flood_" + i, "noise");
      clock.addAndGet(1);
    }
    assertEquals(10, f.size());
    assertEquals(3, f.heldBy(1));
    assertEquals(7, f.heldBy(2));
    for (int i = 0; i < 3; i++) {
      assertEquals(Set.of("mine"), tenantsOf(f, 1, "innocent_" + i), "innocent_" + i);
    }
    assertEquals(Set.of(), tenantsOf(f, 2, "flood_92"), "the flood's oldest went first");
    assertEquals(Set.of("noise"), tenantsOf(f, 2, "flood_93"));
    // A newcomer takes from the sender holding the most, never from the smaller one.
    learn(f, 3, "late", "new");
    learn(f, 3, "later", "new");
    assertEquals(3, f.heldBy(1));
    assertEquals(5, f.heldBy(2));
    assertEquals(2, f.heldBy(3));
    // Once every sender holds as much as the others, the largest loses its oldest: fair shares.
    for (int i = 0; i < 20; i++) {
      learn(f, 3, "late_" + i, "new");
      clock.addAndGet(1);
    }
    assertEquals(10, f.size());
    assertTrue(f.heldBy(1) == 3 && f.heldBy(2) + f.heldBy(3) == 7, "1 keeps its 3");
    assertTrue(Math.abs(f.heldBy(2) - f.heldBy(3)) <= 1, f.heldBy(2) + " / " + f.heldBy(3));
  }

  /**
   * Random learning by a few senders with a small capacity: every answer is a subset of what the
   * asking sender itself taught, and the counts per sender add up to the size.
   */
  @Test
  void aSenderNeverFindsAnotherSendersTenants() {
    Random r = new Random(7);
    MetricFamilies f = families(50);
    Map<Long, Set<List<String>>> taught = new HashMap<>();
    for (int op = 0; op < 20_000; op++) {
      clock.addAndGet(r.nextInt(1000) * 1_000_000L);
      long sender = 1 + r.nextInt(5);
      String family = "fam_" + r.nextInt(30);
      String tenant = "s" + sender + "t" + r.nextInt(3);
      learn(f, sender, family, tenant);
      taught.computeIfAbsent(sender, s -> new HashSet<>()).add(List.of(family, tenant));
      long asker = 1 + r.nextInt(5);
      String probe = "fam_" + r.nextInt(30);
      for (String t : tenantsOf(f, asker, probe)) {
        assertTrue(
            taught.get(asker).contains(List.of(probe, t)),
            "sender " + asker + " found " + t + " for " + probe);
      }
      int sum = 0;
      for (long s = 1; s <= 5; s++) {
        sum += f.heldBy(s);
      }
      assertEquals(f.size(), sum, "op " + op);
      assertTrue(f.size() <= 50);
    }
  }

  /** A tenant ID of the longest valid length, 150 bytes, distinct for each {@code i}. */
  private static String longId(String prefix, int i) {
    StringBuilder b = new StringBuilder(prefix).append(i);
    while (b.length() < TenantIds.MAX_LENGTH) {
      b.append('x');
    }
    return b.toString();
  }

  @Test
  void longTenantIdsFillTheByteBoundNotTheEntryCount() {
    long bound = 2L << 20;
    MetricFamilies f = new MetricFamilies(500_000, bound, TTL, clock::get);
    for (int i = 0; i < 50_000; i++) {
      learn(f, 1, "m", longId("t-", i));
      assertTrue(f.bytes() <= bound, () -> f.bytes() + " bytes");
    }
    // Each association names its own ID: 256 bytes of it, 48 of arrays, up to 32 of tables.
    int perAssociation = MetricFamilies.ID_BYTES + 32 + 256;
    assertTrue(f.size() < 50_000, "the byte bound, not the entry count, stopped it");
    assertTrue(f.size() >= bound / perAssociation * 3 / 4, f.size() + " associations");
    assertTrue(f.bytes() > bound * 3 / 4, f.bytes() + " bytes, the bound is used");
    // The most recent ones are the ones kept.
    List<String> out = new ArrayList<>();
    byte[] m = bytes("m");
    f.tenantsOf(1, m, 0, 1, out);
    assertTrue(out.contains(longId("t-", 49_999)));
    assertTrue(!out.contains(longId("t-", 0)));
    // Short IDs, shared by many associations, fit many more in the same bound.
    MetricFamilies shortIds = new MetricFamilies(500_000, bound, TTL, clock::get);
    for (int i = 0; i < 15_000; i++) {
      learn(shortIds, 1, "fam_" + i, "t" + (i % 10));
    }
    assertEquals(15_000, shortIds.size());
    assertTrue(f.size() < 15_000 / 2, f.size() + " long against 15,000 short");
  }

  @Test
  void underTheByteBoundAnotherSendersAssociationsSurvive() {
    long bound = 1L << 20;
    MetricFamilies f = new MetricFamilies(500_000, bound, TTL, clock::get);
    for (int i = 0; i < 100; i++) {
      learn(f, 1, "innocent_" + i, "team-" + (i % 10));
      clock.addAndGet(1);
    }
    // A sender of long tenant IDs, each new, far past the byte bound: it recycles its own.
    for (int i = 0; i < 20_000; i++) {
      learn(f, 2, "flood_" + i, longId("evil-", i));
      clock.addAndGet(1);
    }
    assertTrue(f.bytes() <= bound, f.bytes() + " bytes");
    assertEquals(100, f.heldBy(1));
    assertTrue(f.heldBy(2) > 100, f.heldBy(2) + " held by the flood");
    for (int i = 0; i < 100; i++) {
      assertEquals(Set.of("team-" + (i % 10)), tenantsOf(f, 1, "innocent_" + i));
    }
    // Max-min: a third sender of long IDs takes from the flood, never from the innocent one.
    for (int i = 0; i < 20_000; i++) {
      learn(f, 3, "other_" + i, longId("other-", i));
      clock.addAndGet(1);
    }
    assertEquals(100, f.heldBy(1));
    assertTrue(Math.abs(f.heldBy(2) - f.heldBy(3)) <= 1, f.heldBy(2) + " / " + f.heldBy(3));
    assertTrue(f.bytes() <= bound, f.bytes() + " bytes");
  }

  @Test
  void tenantIdsStopBeingChargedWhenTheirLastAssociationGoes() {
    MetricFamilies f = new MetricFamilies(1000, 1L << 20, TTL, clock::get);
    long empty = f.bytes();
    learn(f, 1, "a", longId("x-", 1));
    learn(f, 1, "b", longId("x-", 1));
    long tables = MetricFamilies.arrayBytes(1000);
    long one = tables + MetricFamilies.tenantIdBytes(longId("x-", 1)) + MetricFamilies.SENDER_BYTES;
    assertEquals(0, empty);
    assertEquals(one, f.bytes(), "one ID, named twice, charged once");
    assertEquals(256, MetricFamilies.tenantIdBytes(longId("x-", 1)));
    clock.addAndGet(TTL);
    learn(f, 2, "c", "t");
    assertEquals(1, f.size());
    assertEquals(
        tables + MetricFamilies.tenantIdBytes("t") + MetricFamilies.SENDER_BYTES, f.bytes());
  }

  @Test
  void aByteBoundBelowOneAssociationLearnsNothing() {
    MetricFamilies f = new MetricFamilies(1000, 1000, TTL, clock::get);
    learn(f, 1, "m", "t");
    assertEquals(0, f.size());
    assertTrue(f.bytes() <= 1000);
    MetricFamilies off = new MetricFamilies(1000, 0, TTL, clock::get);
    assertTrue(!off.enabled());
  }

  /** Random learning under a small byte bound: never above it, and counts add up. */
  @Test
  void randomLearningNeverPassesTheByteBound() {
    Random r = new Random(11);
    long bound = 200_000;
    MetricFamilies f = new MetricFamilies(100_000, bound, TTL, clock::get);
    for (int op = 0; op < 30_000; op++) {
      clock.addAndGet(r.nextInt(1000) * 100_000L);
      long sender = 1 + r.nextInt(4);
      String tenant =
          r.nextBoolean() ? "s" + r.nextInt(20) : longId("l" + sender + "-", r.nextInt(5000));
      learn(f, sender, "fam_" + r.nextInt(200), tenant);
      assertTrue(f.bytes() <= bound, "op " + op + ": " + f.bytes());
      int sum = 0;
      for (long s = 1; s <= 4; s++) {
        sum += f.heldBy(s);
      }
      assertEquals(f.size(), sum, "op " + op);
    }
  }
}
