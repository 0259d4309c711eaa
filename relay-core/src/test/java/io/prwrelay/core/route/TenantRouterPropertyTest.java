package io.prwrelay.core.route;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.testing.Oracle;
import io.prwrelay.testing.RequestGenerator;
import io.prwrelay.testing.UnusualEncoding;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Generated requests routed under generated rules must equal the oracle's answer: every tenant's
 * batch holds exactly that tenant's series, in input order, bytes-identical (or identical minus the
 * removed label), nothing lost or duplicated, counts matching.
 *
 * <p>Each seed is independent of the others, so a method's seeds run in parallel (relay-core's pom
 * turns on JUnit's parallel execution); the class still runs alone, so its leak check sees only its
 * own buffers.
 */
class TenantRouterPropertyTest {
  static Stream<Long> seeds() {
    return RoutingProperties.seeds(300);
  }

  @ParameterizedTest(name = "seed {0}")
  @Execution(ExecutionMode.CONCURRENT)
  @MethodSource("seeds")
  void everyTenantBatchEqualsTheOracle(long seed) throws Exception {
    RequestGenerator gen = new RequestGenerator(seed);
    Random r = gen.random();
    TenantRules rules = RoutingProperties.randomRules(r, true);
    int series = RoutingProperties.randomShape(gen, seed, 3000);
    TenantRouter router = new TenantRouter(rules);
    // Route several requests through one router: tenants seen before must keep routing correctly.
    for (int round = 0; round < 3; round++) {
      WriteRequest request = gen.request(series, rules.labels());
      ByteBuf in = RoutingProperties.wrap(request.toByteArray(), r);
      try {
        RouteResult result = router.route(in, RoutingProperties.ALLOC);
        RouteAssertions.assertRoutedLikeOracle(request, rules, result);
        result.clear();
      } finally {
        in.release();
      }
    }
  }

  /**
   * The same property for encodings senders rarely write ({@link UnusualEncoding}): padded lengths,
   * value-first labels, unknown fields, samples before or between labels, the tenant label
   * anywhere. These hand over from the fast scan to the stream at every kind of field, before and
   * after the tenant label, with samples counted (every field read) or not (the series left at its
   * tenant label).
   */
  @ParameterizedTest(name = "seed {0}")
  @Execution(ExecutionMode.CONCURRENT)
  @MethodSource("seeds")
  void unusualEncodingsRouteLikeTheOracle(long seed) throws Exception {
    RequestGenerator gen = new RequestGenerator(seed);
    Random r = gen.random();
    TenantRules rules = RoutingProperties.randomRules(r, true);
    RoutingProperties.randomShape(gen, seed, 0);
    gen.exemplarProbability = 0.5;
    gen.histogramProbability = 0.5;
    TenantRouter router = new TenantRouter(rules);
    UnusualEncoding encoding = new UnusualEncoding(r);
    for (int round = 0; round < 3; round++) {
      byte[] bytes = encoding.encode(gen.request(r.nextInt(60), rules.labels()));
      WriteRequest request = WriteRequest.parseFrom(bytes);
      ByteBuf in = RoutingProperties.wrap(bytes, r);
      try {
        RouteResult result = router.route(in, RoutingProperties.ALLOC);
        RouteAssertions.assertRoutedLikeOracle(request, rules, result, false);
        result.clear();
      } finally {
        in.release();
      }
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @Execution(ExecutionMode.CONCURRENT)
  @MethodSource("seeds")
  void rejectPolicyFailsOnTheFirstSeriesWithoutTenantAndSendsNothing(long seed) throws Throwable {
    RequestGenerator gen = new RequestGenerator(seed);
    TenantRules rules = RoutingProperties.REJECT_RULES;
    WriteRequest request = gen.request(gen.random().nextInt(100), rules.labels());
    int firstBad = -1;
    for (int i = 0; i < request.getTimeseriesCount() && firstBad < 0; i++) {
      if (Oracle.resolve(request.getTimeseries(i), rules.labels(), "").tenant() == null) {
        firstBad = i;
      }
    }
    ByteBuf in = Unpooled.wrappedBuffer(request.toByteArray());
    try {
      RouteResult result = new TenantRouter(rules).route(in, RoutingProperties.ALLOC);
      RoutingProperties.assertRejectedAtFirstSeriesWithoutTenant(
          result, firstBad, () -> RouteAssertions.assertRoutedLikeOracle(request, rules, result));
      result.clear();
    } finally {
      in.release();
    }
  }
}
