package io.prwrelay.core.route;

import static io.prwrelay.testing.RequestBuffers.MAX_OUTPUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.testing.FuzzInputs;
import io.prwrelay.testing.Oracle;
import io.prwrelay.testing.V2Oracle;
import io.prwrelay.testing.V2Oracle.ResolvedSeries;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

/**
 * Fuzzed bytes as a decompressed request, PRW 1.0 through {@link TenantRouter} and PRW 2.0 through
 * {@link V2TenantRouter} in both output formats, each under two sets of rules: the router either
 * answers a typed {@link RequestError} and no batch, or splits the request so that every tenant's
 * batch decodes (with the generated oracle classes) to exactly the series the oracle assigns that
 * tenant, with matching counts. Nothing else may be thrown and nothing may leak.
 *
 * <p>The default build replays the inputs under {@code RouterFuzzTestInputs/<method>} in the test
 * resources; {@code JAZZER_FUZZ=1} fuzzes one method (docs/testing.md, "Fuzzing").
 */
class RouterFuzzTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  /**
   * Removing the label, broadcasting metadata and counting samples (every field of a PRW 1.0 series
   * read); the other keeps the label, drops metadata and stops at the tenant label.
   */
  private static final List<TenantRules> RULES =
      List.of(
          TenantRules.builder()
              .labels("service_id", "instance")
              .removeLabel(true)
              .metadata(TenantRules.MetadataPolicy.BROADCAST)
              .maxCachedTenants(4)
              .countSamples(true)
              .build(),
          TenantRules.builder()
              .labels("instance")
              .prefix("p-")
              .missing(TenantRules.MissingPolicy.DROP)
              .metadata(TenantRules.MetadataPolicy.DROP)
              .build());

  // One router per rules, reused across inputs as the relay reuses one per event loop.
  private static final List<TenantRouter> V1 = new ArrayList<>();
  private static final List<V2TenantRouter> V2 = new ArrayList<>();

  static {
    for (TenantRules rules : RULES) {
      V1.add(new TenantRouter(rules));
      for (V2BatchEncoder.Format format : V2BatchEncoder.Format.values()) {
        V2.add(new V2TenantRouter(rules, format, MAX_OUTPUT));
      }
    }
  }

  @FuzzTest(maxDuration = "4m")
  void v1RouterSplitsExactlyOrAnswersATypedError(byte[] data) throws Exception {
    routeWithEach(V1, data, RouterFuzzTest::assertV1LikeOracle);
  }

  @FuzzTest(maxDuration = "4m")
  void v2RouterSplitsExactlyOrAnswersATypedError(byte[] data) throws Exception {
    routeWithEach(V2, data, RouterFuzzTest::assertV2LikeOracle);
  }

  /** What a router's batches for {@code data} must match when it answers no error. */
  private interface OracleCheck<R> {
    void check(byte[] data, R router, RouteResult result) throws Exception;
  }

  /**
   * Routes {@code data} with each of {@code routers}: a typed error, or batches {@code likeOracle}
   * accepts; the input and every result are released.
   */
  private static <R extends AbstractTenantRouter> void routeWithEach(
      List<R> routers, byte[] data, OracleCheck<R> likeOracle) throws Exception {
    for (R router : routers) {
      ByteBuf in = FuzzInputs.wrap(data, ALLOC);
      RouteResult result = null;
      try {
        result = router.route(in, ALLOC);
        if (result.error() != null) {
          assertTypedError(result, data.length);
        } else {
          likeOracle.check(data, router, result);
        }
      } finally {
        if (result != null) {
          result.clear();
        }
        in.release();
      }
    }
  }

  private static void assertTypedError(RouteResult result, int length) {
    RequestError error = result.error();
    assertEquals(0, result.batches().size(), "no batch beside an error");
    assertTrue(error.offset() >= -1 && error.offset() <= length, error::message);
    assertNotNull(error.field(), error::message);
    assertTrue(error.message().contains(error.field()), error::message);
  }

  private static void assertV1LikeOracle(byte[] data, TenantRouter router, RouteResult result)
      throws Exception {
    TenantRules rules = rulesOf(router);
    WriteRequest request = FuzzInputs.parseV1(data);
    if (request == null) {
      return;
    }
    Map<TenantProblem, Integer> problems = new EnumMap<>(TenantProblem.class);
    Map<String, WriteRequest> expected = Oracle.expectedBatches(request, rules, problems);
    assertEquals(new ArrayList<>(expected.keySet()), tenants(result), "tenants");
    for (TenantBatch b : result.batches()) {
      WriteRequest want = expected.get(b.tenant());
      WriteRequest got = WriteRequest.parseFrom(ByteBufUtil.getBytes(b.content()));
      assertEquals(want.getTimeseriesList(), got.getTimeseriesList(), "series of " + b.tenant());
      assertEquals(want.getMetadataList(), got.getMetadataList(), "metadata of " + b.tenant());
      SeriesCounts counts = RouteAssertions.expectedCounts(want, rules);
      assertEquals(counts.series(), b.series(), "series count of " + b.tenant());
      assertEquals(counts.samples(), b.samples(), "samples of " + b.tenant());
      assertEquals(counts.exemplars(), b.exemplars(), "exemplars of " + b.tenant());
      assertEquals(counts.histograms(), b.histograms(), "histograms of " + b.tenant());
    }
    assertEquals(request.getTimeseriesCount(), result.seriesIn(), "series read");
    assertProblems(rules, problems, result);
  }

  private static void assertV2LikeOracle(byte[] data, V2TenantRouter router, RouteResult result)
      throws Exception {
    TenantRules rules = router.rules();
    Request request = FuzzInputs.parseV2(data);
    if (request == null) {
      return;
    }
    Map<TenantProblem, Integer> problems = new EnumMap<>(TenantProblem.class);
    Map<String, List<ResolvedSeries>> expected = V2Oracle.expectedSeries(request, rules, problems);
    assertEquals(new ArrayList<>(expected.keySet()), tenants(result), "tenants");
    for (TenantBatch b : result.batches()) {
      List<ResolvedSeries> want = expected.get(b.tenant());
      byte[] got = ByteBufUtil.getBytes(b.content());
      if (router.format() == V2BatchEncoder.Format.V2) {
        Request batch = Request.parseFrom(got);
        if (new HashSet<>(request.getSymbolsList()).size() == request.getSymbolsCount()) {
          // A request that repeats a symbol keeps both copies where its series use both.
          V2RouteAssertions.assertMinimalTable(
              V2RouteAssertions.symbolPositions(request), batch, b.tenant());
        }
        List<ResolvedSeries> resolved = new ArrayList<>();
        for (io.prwrelay.oracle.v2.TimeSeries ts : batch.getTimeseriesList()) {
          resolved.add(V2Oracle.resolve(ts, batch.getSymbolsList()));
        }
        assertEquals(want, resolved, () -> "resolved series of " + b.tenant());
      } else {
        assertEquals(
            V2Oracle.toV1(want),
            FuzzInputs.withoutCopiedUnknowns(WriteRequest.parseFrom(got)),
            () -> "v1 batch of " + b.tenant());
      }
      assertEquals(want.size(), b.series(), "series count of " + b.tenant());
      long samples = 0;
      for (ResolvedSeries s : want) {
        samples += s.samples().size();
      }
      assertEquals(samples, b.samples(), "samples of " + b.tenant());
    }
    assertEquals(request.getTimeseriesCount(), result.seriesIn(), "series read");
    assertProblems(rules, problems, result);
  }

  private static void assertProblems(
      TenantRules rules, Map<TenantProblem, Integer> problems, RouteResult result) {
    for (TenantProblem p : TenantProblem.values()) {
      int want = problems.getOrDefault(p, 0);
      boolean defaults = rules.missing() == TenantRules.MissingPolicy.DEFAULT;
      assertEquals(defaults ? want : 0, result.defaulted(p), "defaulted " + p);
      assertEquals(defaults ? 0 : want, result.dropped(p), "dropped " + p);
    }
  }

  private static List<String> tenants(RouteResult result) {
    List<String> tenants = new ArrayList<>();
    for (TenantBatch b : result.batches()) {
      tenants.add(b.tenant());
    }
    return tenants;
  }

  private static TenantRules rulesOf(TenantRouter router) {
    return RULES.get(V1.indexOf(router));
  }
}
