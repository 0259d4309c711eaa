package io.prwrelay.core.route;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufUtil;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.TimeSeries;
import io.prwrelay.testing.V2Oracle;
import io.prwrelay.testing.V2Oracle.ResolvedSeries;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Checks a {@link RouteResult} of a PRW 2.0 request against the oracle's answer. */
final class V2RouteAssertions {
  private V2RouteAssertions() {}

  /**
   * Asserts that every tenant's batch holds exactly that tenant's series with identical resolved
   * content, in a minimal symbols table that keeps the request's order (PRW 2.0), or equals the
   * oracle's conversion byte for byte (PRW 1.0); and that the counts match.
   */
  static void assertRoutedLikeOracle(
      Request request, TenantRules rules, RouteResult result, V2BatchEncoder.Format format)
      throws Exception {
    assertNull(result.error(), () -> "unexpected error: " + result.error());
    Map<TenantProblem, Integer> problems = new EnumMap<>(TenantProblem.class);
    Map<String, List<ResolvedSeries>> expected = V2Oracle.expectedSeries(request, rules, problems);
    RouteAssertions.assertTenantsInOrder(expected.keySet(), result);
    Map<String, Integer> symbolPositions = symbolPositions(request);
    for (TenantBatch b : result.batches()) {
      List<ResolvedSeries> want = expected.get(b.tenant());
      byte[] got = ByteBufUtil.getBytes(b.content());
      int metadata;
      if (format == V2BatchEncoder.Format.V2) {
        Request batch = Request.parseFrom(got);
        assertMinimalTable(symbolPositions, batch, b.tenant());
        List<ResolvedSeries> resolved = new ArrayList<>();
        for (TimeSeries ts : batch.getTimeseriesList()) {
          resolved.add(V2Oracle.resolve(ts, batch.getSymbolsList()));
        }
        assertEquals(want, resolved, () -> "resolved series of tenant " + b.tenant());
        metadata = 0;
        for (ResolvedSeries s : want) {
          metadata += s.metadata() == null ? 0 : 1;
        }
      } else {
        WriteRequest v1 = V2Oracle.toV1(want);
        assertArrayEquals(v1.toByteArray(), got, () -> "v1 bytes of tenant " + b.tenant());
        assertEquals(v1, WriteRequest.parseFrom(got), () -> "v1 batch of tenant " + b.tenant());
        metadata = v1.getMetadataCount();
      }
      RouteAssertions.assertCounts(V2Oracle.counts(want), metadata, b);
    }
    assertEquals(request.getTimeseriesCount(), result.seriesIn(), "series read");
    int metadataIn = 0;
    for (TimeSeries ts : request.getTimeseriesList()) {
      metadataIn += ts.hasMetadata() ? 1 : 0;
    }
    assertEquals(metadataIn, result.metadataIn(), "metadata read");
    RouteAssertions.assertProblems(problems, rules, result);
  }

  /**
   * Where each symbol of {@code request} first stands in its table: computed once per request, so
   * checking a batch's order costs a lookup per symbol rather than a search of the request's table.
   */
  static Map<String, Integer> symbolPositions(Request request) {
    Map<String, Integer> positions = new HashMap<>();
    List<String> in = request.getSymbolsList();
    for (int i = in.size() - 1; i >= 0; i--) {
      positions.put(in.get(i), i);
    }
    return positions;
  }

  /**
   * The batch's table starts with "", holds each symbol once, only symbols the batch's own series
   * reference (so nothing another tenant's series alone use), in the request's order.
   *
   * @param symbolPositions the request's {@link #symbolPositions}
   */
  static void assertMinimalTable(
      Map<String, Integer> symbolPositions, Request batch, String tenant) {
    List<String> symbols = batch.getSymbolsList();
    assertEquals("", symbols.get(0), () -> "first symbol of " + tenant);
    assertEquals(
        symbols.size(), new HashSet<>(symbols).size(), () -> "duplicate symbols in " + tenant);
    Set<String> referenced = V2Oracle.referencedSymbols(batch);
    assertEquals(referenced, new HashSet<>(symbols), () -> "symbols of " + tenant);
    int last = -1;
    for (String s : symbols) {
      int at = symbolPositions.getOrDefault(s, -1);
      assertTrue(at > last, () -> "symbols of " + tenant + " keep the request's order");
      last = at;
    }
  }
}
