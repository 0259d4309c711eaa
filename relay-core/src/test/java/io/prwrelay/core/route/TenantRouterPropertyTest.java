package io.prwrelay.core.route;

import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.testing.ForEachSeed;
import io.prwrelay.testing.Oracle;
import io.prwrelay.testing.RequestBuffers;
import io.prwrelay.testing.RequestGenerator;
import io.prwrelay.testing.UnusualEncoding;
import java.util.Random;
import java.util.stream.Stream;

/**
 * Generated requests routed under generated rules must equal the oracle's answer: every tenant's
 * batch holds exactly that tenant's series, in input order, bytes-identical (or identical minus the
 * removed label), nothing lost or duplicated, counts matching.
 */
class TenantRouterPropertyTest {
  static Stream<Long> seeds() {
    return RequestBuffers.seeds(300);
  }

  @ForEachSeed
  void everyTenantBatchEqualsTheOracle(long seed) throws Exception {
    RequestGenerator gen = new RequestGenerator(seed);
    Random r = gen.random();
    TenantRules rules = RoutingProperties.randomRules(r, true);
    int series = RoutingProperties.randomShape(gen, seed, 3000);
    TenantRouter router = new TenantRouter(rules);
    Oracle.Families families = new Oracle.Families();
    // Route several requests through one router: tenants seen before must keep routing correctly,
    // and metric families learned before route a request that has only metadata.
    for (int round = 0; round < 3; round++) {
      WriteRequest request =
          gen.request(round == 2 && r.nextBoolean() ? 0 : series, rules.labels());
      RouteResult result = RoutingProperties.routeAnyKind(router, request.toByteArray(), r);
      RouteAssertions.assertRoutedLikeOracle(request, rules, result, true, families);
      result.clear();
    }
  }

  /**
   * The same property for encodings senders rarely write ({@link UnusualEncoding}): padded lengths,
   * value-first labels, unknown fields, samples before or between labels, the tenant label
   * anywhere. These hand over from the fast scan to the stream at every kind of field, before and
   * after the tenant label, with samples counted (every field read) or not (the series left at its
   * tenant label).
   */
  @ForEachSeed
  void unusualEncodingsRouteLikeTheOracle(long seed) throws Exception {
    RequestGenerator gen = new RequestGenerator(seed);
    Random r = gen.random();
    TenantRules rules = RoutingProperties.randomRules(r, true);
    RoutingProperties.randomShape(gen, seed, 0);
    gen.exemplarProbability = 0.5;
    gen.histogramProbability = 0.5;
    TenantRouter router = new TenantRouter(rules);
    Oracle.Families families = new Oracle.Families();
    UnusualEncoding encoding = new UnusualEncoding(r);
    for (int round = 0; round < 3; round++) {
      byte[] bytes = encoding.encode(gen.request(r.nextInt(60), rules.labels()));
      WriteRequest request = WriteRequest.parseFrom(bytes);
      RouteResult result = RoutingProperties.routeAnyKind(router, bytes, r);
      RouteAssertions.assertRoutedLikeOracle(request, rules, result, false, families);
      result.clear();
    }
  }

  @ForEachSeed
  void rejectPolicyFailsOnTheFirstSeriesWithoutTenantAndSendsNothing(long seed) throws Throwable {
    RequestGenerator gen = new RequestGenerator(seed);
    TenantRules rules = RoutingProperties.REJECT_RULES;
    WriteRequest request = gen.request(gen.random().nextInt(100), rules.labels());
    RouteResult result = RoutingProperties.route(new TenantRouter(rules), request.toByteArray());
    RoutingProperties.assertRejectedAtFirstSeriesWithoutTenant(
        result,
        Oracle.firstSeriesWithoutTenant(request, rules.labels()),
        () -> RouteAssertions.assertRoutedLikeOracle(request, rules, result));
    result.clear();
  }
}
