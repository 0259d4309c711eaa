package io.prwrelay.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.google.protobuf.UnknownFieldSet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.testing.Oracle;
import io.prwrelay.testing.V2Oracle;
import io.prwrelay.testing.V2RequestGenerator;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Generated PRW 2.0 requests, routed under generated rules, must equal the oracle's answer: every
 * tenant's batch holds exactly that tenant's series with identical resolved labels, samples,
 * histograms, exemplars and metadata, in a minimal symbols table of its own (PRW 2.0 output), or
 * equals the oracle's PRW 1.0 conversion byte for byte (PRW 1.0 output).
 */
class V2TenantRouterPropertyTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  static Stream<Long> seeds() {
    return LongStream.rangeClosed(1, 200).boxed();
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
        .maxCachedTenants(r.nextInt(3) == 0 ? 2 : 1000)
        .build();
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void everyTenantBatchEqualsTheOracleInBothFormats(long seed) throws Exception {
    V2RequestGenerator gen = new V2RequestGenerator(seed);
    Random r = gen.random();
    TenantRules rules = rules(r);
    gen.sortLabels = r.nextInt(3) != 0;
    gen.maxExtraLabels = r.nextInt(41);
    int series = seed % 50 == 0 ? 2000 : r.nextInt(200);
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
        ByteBuf in = TenantRouterPropertyTest.wrap(g.bytes(), r);
        try {
          RouteResult result = router.route(in, ALLOC);
          V2RouteAssertions.assertRoutedLikeOracle(g.request(), rules, result, format);
          result.clear();
        } finally {
          in.release();
        }
      }
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void rejectPolicyFailsOnTheFirstSeriesWithoutTenantAndSendsNothing(long seed) throws Exception {
    V2RequestGenerator gen = new V2RequestGenerator(seed);
    TenantRules rules =
        TenantRules.builder()
            .labels("service_id", "team")
            .missing(TenantRules.MissingPolicy.REJECT)
            .build();
    V2RequestGenerator.Generated g = gen.request(gen.random().nextInt(100), rules.labels());
    Request request = g.request();
    int firstBad = -1;
    for (int i = 0; i < request.getTimeseriesCount() && firstBad < 0; i++) {
      V2Oracle.ResolvedSeries s =
          V2Oracle.resolve(request.getTimeseries(i), request.getSymbolsList());
      Oracle.Resolution res = V2Oracle.tenant(s, rules.labels(), "");
      if (res.tenant() == null) {
        firstBad = i;
      }
    }
    V2TenantRouter router = new V2TenantRouter(rules, V2BatchEncoder.Format.V2);
    ByteBuf in = Unpooled.wrappedBuffer(g.bytes());
    try {
      RouteResult result = router.route(in, ALLOC);
      if (firstBad < 0) {
        V2RouteAssertions.assertRoutedLikeOracle(request, rules, result, V2BatchEncoder.Format.V2);
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
}
