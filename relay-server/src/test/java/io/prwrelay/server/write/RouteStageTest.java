package io.prwrelay.server.write;

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
import io.prwrelay.server.insight.TenantInsight;
import io.prwrelay.server.lane.Fragment;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.protocol.Protocol;
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

  /** The memory budget the requests routed here are admitted to; all of it one client's. */
  private InflightBudget budget = new InflightBudget(64 << 20, 64 << 20);

  /** Bytes the request's reservation held when the stage returned. */
  private long reserved;

  /** {@code relay.server.max-decompressed-bytes} of the stage, the bound of what it builds. */
  private int maxOutput = 1 << 20;

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
            config.tenant().rules(), maxOutput, false, MetricFamilies.of(config.tenant().rules()));
    return new RouteStage(
        config.tenant(),
        new DownstreamProtocol(mode),
        metrics,
        TenantInsight.of(config.metrics().insight()));
  }

  /**
   * Routes {@code request} as the pipeline does: its reservation in {@link #budget} holds a body of
   * {@code request.length} bytes and the request decompressed to as much; released once routed, as
   * the answer would.
   */
  private Routed route(
      RouteStage stage, byte[] request, Protocol input, String tenant, TenantAllowList allowed) {
    ByteBuf decoded = Unpooled.wrappedBuffer(request);
    decodedRequests.add(decoded);
    InflightBudget.Reservation r = budget.admit(null, request.length).reservation();
    RequestGrant grant = res.grant.reset(budget, r, request.length);
    try {
      assertTrue(grant.reserve(request.length), "the decompressed request fits");
      return stage.route(res, alloc, decoded, input, tenant, allowed, SenderKey.UNKNOWN, grant);
    } finally {
      grant.clear();
      reserved = r.bytes();
      r.release();
    }
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

  /** One 64 KiB symbol in each of {@code series} series of one tenant: 64 KiB each in PRW 1.0. */
  private static byte[] bigSymbol(int series) {
    return V2RawProto.symbolInEverySeries("x".repeat(64 << 10), series, 1);
  }

  private static long bytes(List<Fragment> batches) {
    long n = 0;
    for (Fragment b : batches) {
      n += b.size();
    }
    return n;
  }

  @Test
  void batchesTheBudgetCannotHoldNowAre503WithRetryAfterAndNothingIsAllocated() throws Exception {
    RouteStage stage = stage(ProtocolMode.V1);
    byte[] request = bigSymbol(15); // about 1 MiB once converted
    budget = new InflightBudget(2 << 20, 2 << 20);
    InflightBudget.Reservation other = budget.admit(null, 1 << 20).reservation();
    Answer a = refusal(route(stage, request, Protocol.V2, null, TenantAllowList.ANY));
    assertEquals(503, a.status());
    assertEquals(5, a.retryAfterSeconds());
    assertEquals(
        "the relay's request memory (relay.server.max-inflight-bytes=2097152) is in use; retry"
            + " later",
        a.message());
    assertEquals(0, alloc.allocated(), "nothing was allocated for the batches");
    assertEquals(2L * request.length, reserved, "the body and the decompressed request only");

    other.release();
    List<Fragment> batches = batches(route(stage, request, Protocol.V2, null, TenantAllowList.ANY));
    try {
      assertEquals(1, batches.size());
      assertEquals(2L * request.length + bytes(batches), reserved, "and then the batch");
    } finally {
      release(batches);
    }
    alloc.assertAllReleased();
  }

  @Test
  void batchesThatCouldNeverFitOneClientsShareAre413NamingTheKey() throws Exception {
    maxOutput = 8 << 20;
    RouteStage stage = stage(ProtocolMode.V1);
    byte[] request = bigSymbol(40); // about 2.5 MiB once converted
    List<Fragment> unbounded =
        batches(route(stage, request, Protocol.V2, null, TenantAllowList.ANY));
    long output = bytes(unbounded);
    release(unbounded);
    budget = new InflightBudget(8 << 20, 1 << 20);
    int before = alloc.allocated();
    Answer a = refusal(route(stage, request, Protocol.V2, null, TenantAllowList.ANY));
    assertEquals(413, a.status());
    assertEquals(
        "the request takes "
            + (2L * request.length + output)
            + " bytes compressed, decompressed and rebuilt as tenant requests, more than one"
            + " client may hold (relay.server.max-inflight-bytes-per-client=1048576)",
        a.message());
    assertEquals(-1, a.retryAfterSeconds());
    assertEquals(before, alloc.allocated(), "nothing was allocated for the batches");
    alloc.assertAllReleased();
  }

  @Test
  void aLargeRequestsScratchMemoryIsReservedForItAndGivenBackAfterIt() throws Exception {
    maxOutput = 64 << 20;
    RouteStage stage = stage(ProtocolMode.V1);
    byte[][] series = new byte[100_000][];
    for (int i = 0; i < series.length; i++) {
      series[i] = V2RawProto.series(V2RawProto.refs(1, 2, 3, 4), V2RawProto.sample(i, 1));
    }
    byte[] request =
        V2RawProto.request(new String[] {"", "__name__", "m", "service_id", "a"}, series);
    long[] scratch = new long[2];
    for (int round = 0; round < 2; round++) {
      List<Fragment> batches =
          batches(route(stage, request, Protocol.V2, null, TenantAllowList.ANY));
      try {
        assertEquals(100_000, batches.get(0).series());
        // Beyond the body, the decompressed request and the batch: the arrays holding 100,000
        // series' bounds and refs, past the 4 MiB a loop keeps.
        scratch[round] = reserved - 2L * request.length - bytes(batches);
      } finally {
        release(batches);
      }
      assertEquals(0, res.scratch.grownBytes(), "the loop's arrays are back to their sizes");
    }
    assertTrue(scratch[0] > 0, "scratch memory beyond what the loop keeps: " + scratch[0]);
    assertEquals(scratch[0], scratch[1], "the second request grows them again, and pays for it");
    alloc.assertAllReleased();
  }
}
