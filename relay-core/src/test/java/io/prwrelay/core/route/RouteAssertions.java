package io.prwrelay.core.route;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBufUtil;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.testing.Oracle;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/** Checks a {@link RouteResult} against the oracle's answer for the same request and rules. */
final class RouteAssertions {
  private RouteAssertions() {}

  /** Asserts the routed batches equal the oracle's, byte for byte, with matching counts. */
  static void assertRoutedLikeOracle(WriteRequest request, TenantRules rules, RouteResult result)
      throws Exception {
    assertNull(result.error(), () -> "unexpected error: " + result.error());
    Map<TenantProblem, Integer> problems = new EnumMap<>(TenantProblem.class);
    Map<String, WriteRequest> expected = Oracle.expectedBatches(request, rules, problems);
    List<String> tenants = new ArrayList<>();
    for (TenantBatch b : result.batches()) {
      tenants.add(b.tenant());
    }
    assertEquals(new ArrayList<>(expected.keySet()), tenants, "tenants in order of first series");
    for (TenantBatch b : result.batches()) {
      WriteRequest want = expected.get(b.tenant());
      byte[] got = ByteBufUtil.getBytes(b.content());
      assertArrayEquals(want.toByteArray(), got, () -> "bytes of tenant " + b.tenant());
      assertEquals(
          want, WriteRequest.parseFrom(got), () -> "decoded batch of tenant " + b.tenant());
      assertEquals(want.getTimeseriesCount(), b.series(), "series count of " + b.tenant());
      long samples = 0;
      long exemplars = 0;
      long histograms = 0;
      for (TimeSeries ts : want.getTimeseriesList()) {
        samples += ts.getSamplesCount();
        exemplars += ts.getExemplarsCount();
        histograms += ts.getHistogramsCount();
      }
      assertEquals(samples, b.samples(), "samples of " + b.tenant());
      assertEquals(exemplars, b.exemplars(), "exemplars of " + b.tenant());
      assertEquals(histograms, b.histograms(), "histograms of " + b.tenant());
      assertEquals(want.getMetadataCount(), b.metadata(), "metadata of " + b.tenant());
    }
    assertEquals(request.getTimeseriesCount(), result.seriesIn(), "series read");
    assertEquals(request.getMetadataCount(), result.metadataIn(), "metadata read");
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
