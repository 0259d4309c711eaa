package io.prwrelay.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.route.MetricFamilies;
import io.prwrelay.server.config.ConfigException;
import io.prwrelay.server.config.DownstreamConfig.ProtocolMode;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.downstream.Protocol;
import io.prwrelay.server.insight.TenantInsight;
import io.prwrelay.server.lane.Fragment;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testing.V2RawProto;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The routing stage on its own: the batches it makes of a decompressed request, in which protocol,
 * and what it refuses with the sender's exact answer. Whatever it returns, the decompressed request
 * is released, and a refusal leaves no buffer it allocated unreleased.
 */
class RouteStageTest {
  private final RelayMetrics metrics = new RelayMetrics(10, ByteBufAllocator.DEFAULT);
  private final TrackingAllocator alloc = new TrackingAllocator();
  private final List<ByteBuf> decodedRequests = new ArrayList<>();
  private LoopResources res;

  @AfterEach
  void tearDown() {
    for (ByteBuf d : decodedRequests) {
      assertEquals(0, d.refCnt(), "the stage took ownership of the decompressed request");
    }
    if (res != null) {
      res.close();
    }
  }

  /** The stage with {@code overrides} over the defaults, its downstream taking {@code mode}. */
  private RouteStage stage(ProtocolMode mode, String... overrides) throws ConfigException {
    Map<String, String> props = new HashMap<>(Map.of("relay.tenant.missing", "reject"));
    for (int i = 0; i < overrides.length; i += 2) {
      props.put(overrides[i], overrides[i + 1]);
    }
    RelayConfig config = RelayConfig.load(null, props, Map.of());
    res =
        new LoopResources(
            config.tenant().rules(), 1 << 20, false, MetricFamilies.of(config.tenant().rules()));
    return new RouteStage(
        config.tenant(),
        new DownstreamProtocol(mode),
        metrics,
        TenantInsight.of(config.metrics().insight()));
  }

  private Routed route(
      RouteStage stage, byte[] request, Protocol input, String tenant, TenantAllowList allowed) {
    ByteBuf decoded = Unpooled.wrappedBuffer(request);
    decodedRequests.add(decoded);
    return stage.route(res, alloc, decoded, input, tenant, allowed, SenderKey.UNKNOWN);
  }

  private static byte[] series(String tenant, double value) {
    return RawProto.series(RawProto.label("service_id", tenant), RawProto.sample(value, 1));
  }

  private static List<Fragment> batches(Routed routed) {
    return assertInstanceOf(Routed.Batches.class, routed).list();
  }

  private static boolean whole(Routed routed) {
    return assertInstanceOf(Routed.Batches.class, routed).whole();
  }

  private static Answer refusal(Routed routed) {
    return assertInstanceOf(Refusal.class, routed).answer();
  }

  private static void release(List<Fragment> batches) {
    for (Fragment b : batches) {
      b.discard();
    }
  }

  @Test
  void splitsARequestIntoOneBatchPerTenantInOrderOfFirstSeries() throws Exception {
    RouteStage stage = stage(ProtocolMode.V1);
    byte[] request = RawProto.cat(series("b", 1), series("a", 2), series("b", 3));
    Routed routed = route(stage, request, Protocol.V1, null, TenantAllowList.ANY);
    List<Fragment> batches = batches(routed);
    try {
      assertEquals(List.of("b", "a"), batches.stream().map(Fragment::tenant).toList());
      assertEquals(2, batches.get(0).series());
      assertEquals(1, batches.get(1).series());
      for (Fragment b : batches) {
        assertEquals(Protocol.V1, b.protocol());
      }
      assertFalse(whole(routed));
    } finally {
      release(batches);
    }
  }

  @Test
  void aRequestOfOneTenantWithNothingToChangeIsItsBatchWhole() throws Exception {
    RouteStage stage = stage(ProtocolMode.V1);
    byte[] request = RawProto.cat(series("a", 1), series("a", 2));
    Routed routed = route(stage, request, Protocol.V1, null, TenantAllowList.ANY);
    List<Fragment> batches = batches(routed);
    try {
      assertEquals(1, batches.size());
      assertTrue(whole(routed));
    } finally {
      release(batches);
    }
  }

  @Test
  void aTrustedTenantHeaderMakesTheRequestItselfThatTenantsBatch() throws Exception {
    RouteStage stage = stage(ProtocolMode.V1, "relay.tenant.trust-incoming-header", "true");
    byte[] request = RawProto.cat(series("a", 1), series("b", 2));
    Routed routed = route(stage, request, Protocol.V1, "team-x", TenantAllowList.ANY);
    List<Fragment> batches = batches(routed);
    try {
      assertEquals(1, batches.size());
      Fragment b = batches.get(0);
      assertEquals("team-x", b.tenant());
      assertTrue(whole(routed));
      assertEquals(2, b.series());
      assertSame(decodedRequests.get(0), b.body(), "the batch is the request, not a copy");
      assertEquals(1, b.body().refCnt(), "held by the batch alone");
    } finally {
      release(batches);
    }
  }

  @Test
  void refusesATrustedTenantHeaderThatIsNotATenantIdWith400() throws Exception {
    RouteStage stage = stage(ProtocolMode.V1, "relay.tenant.trust-incoming-header", "true");
    Answer a = refusal(route(stage, series("a", 1), Protocol.V1, "no spaces", TenantAllowList.ANY));
    assertEquals(400, a.status());
    assertEquals(
        "the X-Scope-OrgID header is not a valid tenant ID (characters a-z A-Z 0-9 ! - _ . * ' ("
            + " ), at most 150 bytes)",
        a.message());
  }

  @Test
  void refusesAMalformedRequestWith400AndCountsItsSeries() throws Exception {
    RouteStage stage = stage(ProtocolMode.V1);
    // A series, then a field whose length runs past the end of the request.
    byte[] request = RawProto.cat(series("a", 1), new byte[] {0x0A, 0x7F, 0x01});
    Answer a = refusal(route(stage, request, Protocol.V1, null, TenantAllowList.ANY));
    assertEquals(400, a.status());
    assertEquals(
        "malformed request at byte 33 in timeseries[1]: length 127 exceeds the 1 bytes left",
        a.message());
    assertTrue(
        metrics.scrape().contains("relay_series_rejected_total{reason=\"malformed\"} 1.0"),
        metrics.scrape());
    alloc.assertAllReleased();
  }

  @Test
  void refusesASeriesWithoutATenantWhenTheRulesRejectIt() throws Exception {
    RouteStage stage = stage(ProtocolMode.V1);
    byte[] request =
        RawProto.cat(
            series("a", 1), RawProto.series(RawProto.label("job", "x"), RawProto.sample(1, 1)));
    Answer a = refusal(route(stage, request, Protocol.V1, null, TenantAllowList.ANY));
    assertEquals(400, a.status());
    assertTrue(
        metrics.scrape().contains("relay_series_rejected_total{reason=\"no_tenant\"} 2.0"),
        metrics.scrape());
    alloc.assertAllReleased();
  }

  @Test
  void refusesATenantTheCredentialsMayNotWriteWith403ReleasingEveryBatch() throws Exception {
    RouteStage stage = stage(ProtocolMode.V1);
    byte[] request = RawProto.cat(series("a", 1), series("b", 2), series("c", 3));
    Answer a = refusal(route(stage, request, Protocol.V1, null, TenantAllowList.of(List.of("a"))));
    assertEquals(403, a.status());
    assertEquals(TenantAllowList.forbidden("b"), a, "names the first tenant not allowed");
    assertTrue(
        metrics.scrape().contains("relay_series_rejected_total{reason=\"forbidden_tenant\"} 3.0"),
        metrics.scrape());
    assertTrue(alloc.allocated() > 0, "batches were built before the refusal");
    alloc.assertAllReleased();
  }

  @Test
  void prw2InputIsRoutedIntoTheProtocolTheDownstreamTakes() throws Exception {
    byte[] request =
        V2RawProto.request(
            new String[] {"", "service_id", "a", "b"},
            V2RawProto.series(V2RawProto.refs(1, 2), V2RawProto.sample(1, 1)),
            V2RawProto.series(V2RawProto.refs(1, 3), V2RawProto.sample(2, 1)));
    for (ProtocolMode mode : List.of(ProtocolMode.V1, ProtocolMode.V2)) {
      List<Fragment> batches =
          batches(route(stage(mode), request, Protocol.V2, null, TenantAllowList.ANY));
      try {
        assertEquals(List.of("a", "b"), batches.stream().map(Fragment::tenant).toList());
        Protocol expected = mode == ProtocolMode.V1 ? Protocol.V1 : Protocol.V2;
        for (Fragment b : batches) {
          assertEquals(expected, b.protocol(), "downstream " + mode);
        }
      } finally {
        release(batches);
        res.close();
        res = null;
      }
    }
  }
}
