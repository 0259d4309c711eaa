package io.prwrelay.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.testing.AbstractRequestGenerator;
import io.prwrelay.testing.RequestBuffers;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.function.Executable;

/**
 * The inputs and checks that the PRW 1.0 and PRW 2.0 router tests share: random rules and request
 * shapes, a request routed from the kinds of buffer a router may get, and what a malformed or
 * rejected request must look like.
 */
final class RoutingProperties {
  /** Two tenant labels, and a request with any series without one of them is rejected. */
  static final TenantRules REJECT_RULES =
      TenantRules.builder()
          .labels("service_id", "team")
          .missing(TenantRules.MissingPolicy.REJECT)
          .build();

  private RoutingProperties() {}

  /** Routes {@code request} from a heap buffer that is released before returning. */
  static RouteResult route(AbstractTenantRouter router, byte[] request) {
    return RequestBuffers.readHeap(request, in -> router.route(in, RequestBuffers.ALLOC));
  }

  /**
   * Routes {@code request} from one of the kinds of buffer a router may get, drawn from {@code r},
   * that is released before returning.
   */
  static RouteResult routeAnyKind(AbstractTenantRouter router, byte[] request, Random r) {
    return RequestBuffers.readAnyKind(request, r, in -> router.route(in, RequestBuffers.ALLOC));
  }

  /**
   * Asserts that routing the malformed request of {@code corruption} gives a typed error naming its
   * field, its byte offset (unless negative) and its problem, and no batch; and that {@code router}
   * then still routes the valid {@code next} request, of one tenant, to one batch.
   */
  static void assertMalformedAndRouterStillUsable(
      AbstractTenantRouter router, Corruption corruption, byte[] next) {
    RouteResult result = route(router, corruption.request());
    assertMalformed(result, corruption);
    result.clear();
    RouteResult ok = route(router, next);
    assertNull(ok.error(), () -> "after " + corruption + ": " + ok.error().message());
    assertEquals(1, ok.batches().size(), () -> "after " + corruption);
    ok.clear();
  }

  private static void assertMalformed(RouteResult result, Corruption corruption) {
    String field = corruption.field();
    RequestError error = result.error();
    assertNotNull(error, corruption.name());
    assertEquals(RequestError.Kind.MALFORMED, error.kind());
    assertEquals(field, error.field(), error::message);
    if (corruption.offset() >= 0) {
      assertEquals(corruption.offset(), error.offset(), error::message);
    }
    assertTrue(error.problem().contains(corruption.problem()), error::message);
    assertTrue(error.message().contains(field), error::message);
    assertEquals(0, result.batches().size());
  }

  /**
   * Random rules that route every request: tenant label sets with the labels in and out of sort
   * order, default or drop for a missing tenant, an optional prefix, removal of the deciding label,
   * a tenant cache small enough to start over mid-request, samples counted (every field of a PRW
   * 1.0 series read) or not (a series left at its tenant label).
   *
   * @param drawMetadata whether to draw the PRW 1.0 metadata policy (PRW 2.0 ignores it)
   */
  static TenantRules randomRules(Random r, boolean drawMetadata) {
    List<List<String>> labelSets =
        List.of(
            List.of("service_id"),
            List.of("zz_tenant", "service_id"),
            List.of("service_id", "aa_team", "m_owner"),
            List.of("instance"));
    TenantRules.MissingPolicy[] missing = {
      TenantRules.MissingPolicy.DEFAULT, TenantRules.MissingPolicy.DROP
    };
    TenantRules.Builder b =
        TenantRules.builder()
            .labels(labelSets.get(r.nextInt(labelSets.size())))
            .missing(missing[r.nextInt(missing.length)])
            .prefix(r.nextInt(4) == 0 ? "p-" : "")
            .removeLabel(r.nextBoolean())
            .countSamples(r.nextBoolean());
    if (drawMetadata) {
      b.metadata(
          r.nextBoolean() ? TenantRules.MetadataPolicy.BROADCAST : TenantRules.MetadataPolicy.DROP);
    }
    return b.maxCachedTenants(r.nextInt(3) == 0 ? 2 : 1000).build();
  }

  /**
   * Draws the shape of a property test's requests from the generator's own random: labels sorted
   * (mostly) or not, up to 40 extra labels; returns the series per request, {@code large} for every
   * 50th seed.
   */
  static int randomShape(AbstractRequestGenerator gen, long seed, int large) {
    Random r = gen.random();
    gen.sortLabels = r.nextInt(3) != 0;
    gen.maxExtraLabels = r.nextInt(41);
    return seed % 50 == 0 ? large : r.nextInt(200);
  }

  /**
   * Under {@link #REJECT_RULES}: a request whose every series has a tenant is routed like the
   * oracle; otherwise it is rejected naming its first series without one, and nothing is sent.
   *
   * @param firstBad index of the first series without a valid tenant, or -1
   * @param routedLikeOracle asserts the result against the oracle
   */
  static void assertRejectedAtFirstSeriesWithoutTenant(
      RouteResult result, int firstBad, Executable routedLikeOracle) throws Throwable {
    if (firstBad < 0) {
      routedLikeOracle.execute();
    } else {
      RequestError error = result.error();
      assertNotNull(error);
      assertEquals(RequestError.Kind.NO_TENANT, error.kind());
      assertEquals("timeseries[" + firstBad + "]", error.field());
      assertEquals(0, result.batches().size());
    }
  }
}
