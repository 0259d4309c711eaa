package io.prwrelay.core.route;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.testing.Oracle;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/** Checks a {@link RouteResult} against the oracle's answer for the same request and rules. */
final class RouteAssertions {
  private RouteAssertions() {}

  /**
   * Routes {@code request} and returns what each batch holds, by tenant in batch order, after
   * asserting there was no error and giving the result to {@code check}; the result is cleared.
   */
  static Map<String, byte[]> bytesByTenant(
      TenantRouter router, byte[] request, Consumer<RouteResult> check) {
    ByteBuf in = Unpooled.wrappedBuffer(request);
    RouteResult result = router.route(in, PooledByteBufAllocator.DEFAULT);
    try {
      assertNull(result.error(), () -> String.valueOf(result.error()));
      Map<String, byte[]> out = new LinkedHashMap<>();
      for (TenantBatch b : result.batches()) {
        out.put(b.tenant(), ByteBufUtil.getBytes(b.content()));
      }
      check.accept(result);
      return out;
    } finally {
      result.clear();
      in.release();
    }
  }

  /** Asserts the routed batches equal the oracle's, byte for byte, with matching counts. */
  static void assertRoutedLikeOracle(WriteRequest request, TenantRules rules, RouteResult result)
      throws Exception {
    assertRoutedLikeOracle(request, rules, result, true);
  }

  /**
   * Asserts the routed batches decode to the oracle's, with matching counts; byte for byte too when
   * {@code request} is encoded as protobuf-java writes it (otherwise the relay keeps the sender's
   * encoding and only the decoded series can match).
   */
  static void assertRoutedLikeOracle(
      WriteRequest request, TenantRules rules, RouteResult result, boolean byteIdentical)
      throws Exception {
    assertRoutedLikeOracle(request, rules, result, byteIdentical, new Oracle.Families());
  }

  /**
   * {@link #assertRoutedLikeOracle(WriteRequest, TenantRules, RouteResult, boolean)} for a router
   * that has learned {@code families} from the requests it routed before; {@code families} then
   * learns this request's series. The batches of a request without series (its metadata routed by
   * family) may come in any order.
   */
  static void assertRoutedLikeOracle(
      WriteRequest request,
      TenantRules rules,
      RouteResult result,
      boolean byteIdentical,
      Oracle.Families families)
      throws Exception {
    assertNull(result.error(), () -> "unexpected error: " + result.error());
    Map<TenantProblem, Integer> problems = new EnumMap<>(TenantProblem.class);
    Map<String, WriteRequest> expected = Oracle.expectedBatches(request, rules, problems, families);
    if (result.batches().stream().anyMatch(b -> b.series() > 0)) {
      assertTenantsInOrder(expected.keySet(), result);
    } else {
      assertEquals(
          new TreeSet<>(expected.keySet()),
          result.batches().stream().map(TenantBatch::tenant).collect(Collectors.toSet()),
          "tenants of the metadata of a request without series");
    }
    for (TenantBatch b : result.batches()) {
      WriteRequest want = expected.get(b.tenant());
      byte[] got = ByteBufUtil.getBytes(b.content());
      if (byteIdentical) {
        assertArrayEquals(want.toByteArray(), got, () -> "bytes of tenant " + b.tenant());
      }
      assertEquals(
          want, WriteRequest.parseFrom(got), () -> "decoded batch of tenant " + b.tenant());
      assertCounts(expectedCounts(want, rules), want.getMetadataCount(), b);
    }
    assertEquals(request.getTimeseriesCount(), result.seriesIn(), "series read");
    assertEquals(request.getMetadataCount(), result.metadataIn(), "metadata read");
    assertProblems(problems, rules, result);
  }

  /** Asserts one batch per expected tenant, in order of each tenant's first series. */
  static void assertTenantsInOrder(Collection<String> expected, RouteResult result) {
    List<String> tenants = new ArrayList<>();
    for (TenantBatch b : result.batches()) {
      tenants.add(b.tenant());
    }
    assertEquals(new ArrayList<>(expected), tenants, "tenants in order of first series");
  }

  /**
   * What a PRW 1.0 batch reports for {@code want}: the oracle's counts, or only the series when the
   * router does not count samples ({@link TenantRules#countSamples()}).
   */
  static SeriesCounts expectedCounts(WriteRequest want, TenantRules rules) {
    SeriesCounts all = Oracle.counts(want);
    return rules.countSamples() ? all : new SeriesCounts(all.series(), 0, 0, 0);
  }

  /** Asserts the batch reports what the oracle counted. */
  static void assertCounts(SeriesCounts want, int metadata, TenantBatch b) {
    assertEquals(want, b.counts(), () -> "series, samples, exemplars, histograms of " + b.tenant());
    assertEquals(metadata, b.metadata(), () -> "metadata of " + b.tenant());
  }

  /**
   * Asserts the series without a valid tenant were counted by problem as defaulted or dropped,
   * whichever {@link TenantRules#missing()} says, and never as the other.
   */
  static void assertProblems(
      Map<TenantProblem, Integer> problems, TenantRules rules, RouteResult result) {
    for (TenantProblem p : TenantProblem.values()) {
      int want = problems.getOrDefault(p, 0);
      if (rules.missing() == TenantRules.MissingPolicy.DEFAULT) {
        assertEquals(want, result.defaulted(p), "defaulted " + p);
        assertEquals(0, result.dropped(p), "dropped " + p);
      } else {
        assertEquals(want, result.dropped(p), "dropped " + p);
        assertEquals(0, result.defaulted(p), "defaulted " + p);
      }
    }
  }
}
