package io.prwrelay.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.testing.Oracle;
import io.prwrelay.testing.RequestGenerator;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Generated requests routed under generated rules must equal the oracle's answer: every tenant's
 * batch holds exactly that tenant's series, in input order, bytes-identical (or identical minus the
 * removed label), nothing lost or duplicated, counts matching.
 */
class TenantRouterPropertyTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  static Stream<Long> seeds() {
    return LongStream.rangeClosed(1, 300).boxed();
  }

  private static TenantRules rules(Random r) {
    List<List<String>> labelSets =
        List.of(
            List.of("service_id"),
            List.of("zz_tenant", "service_id"),
            List.of("service_id", "aa_team", "m_owner"),
            List.of("instance"));
    TenantRules.MissingPolicy[] missing = {
      TenantRules.MissingPolicy.DEFAULT, TenantRules.MissingPolicy.DROP
    };
    return TenantRules.builder()
        .labels(labelSets.get(r.nextInt(labelSets.size())))
        .missing(missing[r.nextInt(missing.length)])
        .prefix(r.nextInt(4) == 0 ? "p-" : "")
        .removeLabel(r.nextBoolean())
        .metadata(
            r.nextBoolean()
                ? TenantRules.MetadataPolicy.BROADCAST
                : TenantRules.MetadataPolicy.DROP)
        .maxCachedTenants(r.nextInt(3) == 0 ? 2 : 1000)
        .build();
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void everyTenantBatchEqualsTheOracle(long seed) throws Exception {
    RequestGenerator gen = new RequestGenerator(seed);
    Random r = gen.random();
    TenantRules rules = rules(r);
    gen.sortLabels = r.nextInt(3) != 0;
    gen.maxExtraLabels = r.nextInt(41);
    int series = seed % 50 == 0 ? 3000 : r.nextInt(200);
    TenantRouter router = new TenantRouter(rules);
    // Route several requests through one router: tenants seen before must keep routing correctly.
    for (int round = 0; round < 3; round++) {
      WriteRequest request = gen.request(series, rules.labels());
      ByteBuf in = wrap(request.toByteArray(), r);
      try {
        RouteResult result = router.route(in, ALLOC);
        RouteAssertions.assertRoutedLikeOracle(request, rules, result);
        result.clear();
      } finally {
        in.release();
      }
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void rejectPolicyFailsOnTheFirstSeriesWithoutTenantAndSendsNothing(long seed) throws Exception {
    RequestGenerator gen = new RequestGenerator(seed);
    TenantRules rules =
        TenantRules.builder()
            .labels("service_id", "team")
            .missing(TenantRules.MissingPolicy.REJECT)
            .build();
    WriteRequest request = gen.request(gen.random().nextInt(100), rules.labels());
    int firstBad = -1;
    for (int i = 0; i < request.getTimeseriesCount() && firstBad < 0; i++) {
      TimeSeries ts = request.getTimeseries(i);
      if (Oracle.resolve(ts, rules.labels(), "").tenant() == null) {
        firstBad = i;
      }
    }
    TenantRouter router = new TenantRouter(rules);
    ByteBuf in = Unpooled.wrappedBuffer(request.toByteArray());
    try {
      RouteResult result = router.route(in, ALLOC);
      if (firstBad < 0) {
        RouteAssertions.assertRoutedLikeOracle(request, rules, result);
      } else {
        RequestError error = result.error();
        assertNotNull(error);
        assertEquals(RequestError.Kind.NO_TENANT, error.kind());
        assertEquals("timeseries[" + firstBad + "]", error.field());
        assertEquals(0, result.batches().size());
      }
      result.clear();
    } finally {
      in.release();
    }
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
}
