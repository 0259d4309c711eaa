package io.prwrelay.core.route;

import static io.prwrelay.testing.RequestBuffers.MAX_OUTPUT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.UnknownFieldSet;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.testing.ForEachSeed;
import io.prwrelay.testing.RequestBuffers;
import io.prwrelay.testing.V2Oracle;
import io.prwrelay.testing.V2RequestGenerator;
import java.util.EnumMap;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

/**
 * Generated PRW 2.0 requests, routed under generated rules, must equal the oracle's answer: every
 * tenant's batch holds exactly that tenant's series with identical resolved labels, samples,
 * histograms, exemplars and metadata, in a minimal symbols table of its own (PRW 2.0 output), or
 * equals the oracle's PRW 1.0 conversion byte for byte (PRW 1.0 output).
 */
class V2TenantRouterPropertyTest {
  static Stream<Long> seeds() {
    return RequestBuffers.seeds(200);
  }

  @ForEachSeed
  void everyTenantBatchEqualsTheOracleInBothFormats(long seed) throws Exception {
    V2RequestGenerator gen = new V2RequestGenerator(seed);
    Random r = gen.random();
    TenantRules rules = RoutingProperties.randomRules(r, false);
    int series = RoutingProperties.randomShape(gen, seed, 2000);
    // One router per output format, each given every request: several requests through one router,
    // so tenants seen before must keep routing correctly.
    Map<V2BatchEncoder.Format, V2TenantRouter> routers = new EnumMap<>(V2BatchEncoder.Format.class);
    for (V2BatchEncoder.Format format : V2BatchEncoder.Format.values()) {
      routers.put(format, new V2TenantRouter(rules, format, MAX_OUTPUT));
    }
    for (int round = 0; round < 3; round++) {
      V2RequestGenerator.Generated g = gen.request(series, rules.labels());
      Request parsed = Request.parseFrom(g.bytes());
      assertEquals(
          g.request(),
          parsed.toBuilder().setUnknownFields(UnknownFieldSet.getDefaultInstance()).build(),
          "the encoding is the request, plus unknown top-level fields");
      for (Map.Entry<V2BatchEncoder.Format, V2TenantRouter> e : routers.entrySet()) {
        RouteResult result = RoutingProperties.routeAnyKind(e.getValue(), g.bytes(), r);
        V2RouteAssertions.assertRoutedLikeOracle(g.request(), rules, result, e.getKey());
        result.clear();
      }
    }
  }

  @ForEachSeed
  void rejectPolicyFailsOnTheFirstSeriesWithoutTenantAndSendsNothing(long seed) throws Throwable {
    V2RequestGenerator gen = new V2RequestGenerator(seed);
    TenantRules rules = RoutingProperties.REJECT_RULES;
    V2RequestGenerator.Generated g = gen.request(gen.random().nextInt(100), rules.labels());
    V2BatchEncoder.Format format = V2BatchEncoder.Format.V2;
    RouteResult result =
        RoutingProperties.route(new V2TenantRouter(rules, format, MAX_OUTPUT), g.bytes());
    RoutingProperties.assertRejectedAtFirstSeriesWithoutTenant(
        result,
        V2Oracle.firstSeriesWithoutTenant(g.request(), rules.labels()),
        () -> V2RouteAssertions.assertRoutedLikeOracle(g.request(), rules, result, format));
    result.clear();
  }
}
