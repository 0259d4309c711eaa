package io.prwrelay.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.UnknownFieldSet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.testing.V2Oracle;
import io.prwrelay.testing.V2RequestGenerator;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Generated PRW 2.0 requests, routed under generated rules, must equal the oracle's answer: every
 * tenant's batch holds exactly that tenant's series with identical resolved labels, samples,
 * histograms, exemplars and metadata, in a minimal symbols table of its own (PRW 2.0 output), or
 * equals the oracle's PRW 1.0 conversion byte for byte (PRW 1.0 output).
 *
 * <p>Each seed is independent of the others, so a method's seeds run in parallel (relay-core's pom
 * turns on JUnit's parallel execution); the class still runs alone, so its leak check sees only its
 * own buffers.
 */
class V2TenantRouterPropertyTest {
  static Stream<Long> seeds() {
    return RoutingProperties.seeds(200);
  }

  @ParameterizedTest(name = "seed {0}")
  @Execution(ExecutionMode.CONCURRENT)
  @MethodSource("seeds")
  void everyTenantBatchEqualsTheOracleInBothFormats(long seed) throws Exception {
    V2RequestGenerator gen = new V2RequestGenerator(seed);
    Random r = gen.random();
    TenantRules rules = RoutingProperties.randomRules(r, false);
    int series = RoutingProperties.randomShape(gen, seed, 2000);
    for (V2BatchEncoder.Format format : V2BatchEncoder.Format.values()) {
      V2TenantRouter router = new V2TenantRouter(rules, format);
      // Several requests through one router: tenants seen before must keep routing correctly.
      for (int round = 0; round < 3; round++) {
        V2RequestGenerator.Generated g = gen.request(series, rules.labels());
        Request parsed = Request.parseFrom(g.bytes());
        assertEquals(
            g.request(),
            parsed.toBuilder().setUnknownFields(UnknownFieldSet.getDefaultInstance()).build(),
            "the encoding is the request, plus unknown top-level fields");
        ByteBuf in = RoutingProperties.wrap(g.bytes(), r);
        try {
          RouteResult result = router.route(in, RoutingProperties.ALLOC);
          V2RouteAssertions.assertRoutedLikeOracle(g.request(), rules, result, format);
          result.clear();
        } finally {
          in.release();
        }
      }
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @Execution(ExecutionMode.CONCURRENT)
  @MethodSource("seeds")
  void rejectPolicyFailsOnTheFirstSeriesWithoutTenantAndSendsNothing(long seed) throws Throwable {
    V2RequestGenerator gen = new V2RequestGenerator(seed);
    TenantRules rules = RoutingProperties.REJECT_RULES;
    V2RequestGenerator.Generated g = gen.request(gen.random().nextInt(100), rules.labels());
    Request request = g.request();
    int firstBad = -1;
    for (int i = 0; i < request.getTimeseriesCount() && firstBad < 0; i++) {
      V2Oracle.ResolvedSeries s =
          V2Oracle.resolve(request.getTimeseries(i), request.getSymbolsList());
      if (V2Oracle.tenant(s, rules.labels(), "").tenant() == null) {
        firstBad = i;
      }
    }
    V2BatchEncoder.Format format = V2BatchEncoder.Format.V2;
    ByteBuf in = Unpooled.wrappedBuffer(g.bytes());
    try {
      RouteResult result = new V2TenantRouter(rules, format).route(in, RoutingProperties.ALLOC);
      RoutingProperties.assertRejectedAtFirstSeriesWithoutTenant(
          result,
          firstBad,
          () -> V2RouteAssertions.assertRoutedLikeOracle(request, rules, result, format));
      result.clear();
    } finally {
      in.release();
    }
  }
}
