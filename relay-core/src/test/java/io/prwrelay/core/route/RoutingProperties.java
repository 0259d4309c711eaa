package io.prwrelay.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.testing.AbstractRequestGenerator;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.function.Executable;

/**
 * The inputs and checks that the PRW 1.0 and PRW 2.0 router tests share: seeds, random rules, the
 * request in the kinds of buffer a router may get, and what a malformed or rejected request must
 * look like.
 */
final class RoutingProperties {
  static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  /** Two tenant labels, and a request with any series without one of them is rejected. */
  static final TenantRules REJECT_RULES =
      TenantRules.builder()
          .labels("service_id", "team")
          .missing(TenantRules.MissingPolicy.REJECT)
          .build();

  private RoutingProperties() {}

  /** Routes {@code request} from a heap buffer that is released before returning. */
  static RouteResult route(AbstractTenantRouter router, byte[] request) {
    ByteBuf in = Unpooled.wrappedBuffer(request);
    try {
      return router.route(in, ALLOC);
    } finally {
      in.release();
    }
  }

  /**
   * Asserts a malformed request gave a typed error naming {@code field}, the byte {@code offset}
   * (unless negative) and the {@code problem}, and no batch.
   */
  static void assertMalformed(
      RouteResult result, String name, String field, int offset, String problem) {
    RequestError error = result.error();
    assertNotNull(error, name);
    assertEquals(RequestError.Kind.MALFORMED, error.kind());
    assertEquals(field, error.field(), error::message);
    if (offset >= 0) {
      assertEquals(offset, error.offset(), error::message);
    }
    assertTrue(error.problem().contains(problem), error::message);
    assertTrue(error.message().contains(field), error::message);
    assertEquals(0, result.batches().size());
  }

  /** Seeds 1 to {@code count}. */
  static Stream<Long> seeds(int count) {
    return LongStream.rangeClosed(1, count).boxed();
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

  /** The request as a heap buffer at a random offset, or a direct buffer (copied by the router). */
  static ByteBuf wrap(byte[] bytes, Random r) {
    switch (r.nextInt(3)) {
      case 0:
        return Unpooled.wrappedBuffer(bytes);
      case 1:
        {
          ByteBuf b = ALLOC.directBuffer(bytes.length);
          return b.writeBytes(bytes);
        }
      default:
        {
          int pad = 1 + r.nextInt(7);
          ByteBuf b = Unpooled.buffer(bytes.length + 2 * pad);
          b.writeZero(pad).writeBytes(bytes).writeZero(pad);
          b.readerIndex(pad);
          b.writerIndex(pad + bytes.length);
          return b;
        }
    }
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
