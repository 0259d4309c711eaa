package io.prwrelay.core.route;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.str;
import static io.prwrelay.testing.RawProto.varintField;
import static io.prwrelay.testing.RequestBuffers.MAX_OUTPUT;
import static io.prwrelay.testing.V2RawProto.createdTimestamp;
import static io.prwrelay.testing.V2RawProto.exemplar;
import static io.prwrelay.testing.V2RawProto.metadata;
import static io.prwrelay.testing.V2RawProto.refs;
import static io.prwrelay.testing.V2RawProto.request;
import static io.prwrelay.testing.V2RawProto.sample;
import static io.prwrelay.testing.V2RawProto.series;
import static io.prwrelay.testing.V2RawProto.symbols;
import static io.prwrelay.testing.V2RawProto.unpackedRefs;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.encode.V2ToV1Converter;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.TimeSeries;
import io.prwrelay.testing.V2RequestGenerator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Behaviour of {@link V2TenantRouter} on hand-built PRW 2.0 requests. */
class V2TenantRouterTest {
  private static final V2BatchEncoder.Format V2 = V2BatchEncoder.Format.V2;
  private static final V2BatchEncoder.Format V1 = V2BatchEncoder.Format.V1;

  private static TenantRules.Builder rules() {
    return TenantRules.builder().labels("service_id");
  }

  private static Request v2(TenantBatch b) throws Exception {
    return Request.parseFrom(ByteBufUtil.getBytes(b.content()));
  }

  private static WriteRequest v1(TenantBatch b) throws Exception {
    return WriteRequest.parseFrom(ByteBufUtil.getBytes(b.content()));
  }

  private static List<String> labels(Request r, int series) {
    List<String> out = new ArrayList<>();
    for (int ref : r.getTimeseries(series).getLabelsRefsList()) {
      out.add(r.getSymbols(ref));
    }
    return out;
  }

  private static List<String> tenants(RouteResult r) {
    List<String> out = new ArrayList<>();
    for (TenantBatch b : r.batches()) {
      out.add(b.tenant());
    }
    return out;
  }

  //                                      0   1             2         3           4     5
  private static final String[] TABLE = {"", "__name__", "up", "service_id", "a", "b", "team", "x"};

  @Test
  void routesEachSeriesByItsTenantLabelInConfiguredPriority() throws Exception {
    // team (6) outranks service_id (3); the series lists service_id first.
    V2TenantRouter router =
        new V2TenantRouter(
            TenantRules.builder().labels("team", "service_id").build(), V2, MAX_OUTPUT);
    byte[] request =
        request(
            TABLE,
            series(refs(1, 2, 3, 4, 6, 5), sample(1, 1)),
            series(refs(1, 2, 3, 4), sample(2, 2)),
            series(refs(1, 2, 6, 4), sample(3, 3)));
    RouteResult result = RoutingProperties.route(router, request);
    assertNull(result.error());
    assertEquals(List.of("b", "a"), tenants(result));
    assertEquals(1, result.batches().get(0).series());
    assertEquals(2, result.batches().get(1).series());
    assertEquals(
        List.of("__name__", "up", "service_id", "a", "team", "b"),
        labels(v2(result.batches().get(0)), 0));
    result.clear();
  }

  @Test
  void noSymbolOfOneTenantReachesAnotherTenantsRequest() throws Exception {
    String[] secrets = {"secret-of-alpha-7f3a", "secret-of-beta-91c2", "secret-of-gamma-0d44"};
    String[] tenants = {"alpha", "beta", "gamma"};
    V2RequestGenerator gen = new V2RequestGenerator(3);
    List<V2RequestGenerator.Series> all = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      int t = i % 3;
      V2RequestGenerator.Series s = gen.series(List.of());
      List<String> labels = new ArrayList<>(s.labels());
      labels.addAll(List.of("service_id", tenants[t], "token", secrets[t] + "-" + i));
      List<List<String>> exemplars = new ArrayList<>();
      for (List<String> e : s.exemplarLabels()) {
        exemplars.add(List.of("trace_id", secrets[t] + "-trace-" + i));
      }
      String help = s.help() == null ? null : "help " + secrets[t];
      all.add(new V2RequestGenerator.Series(labels, s.rest(), exemplars, help, s.unit()));
    }
    V2RequestGenerator.Generated g = gen.symbolize(all);
    for (V2BatchEncoder.Format format : V2BatchEncoder.Format.values()) {
      RouteResult result =
          RoutingProperties.route(
              new V2TenantRouter(rules().build(), format, MAX_OUTPUT), g.bytes());
      assertNull(result.error());
      assertEquals(List.of(tenants), tenants(result));
      for (int t = 0; t < 3; t++) {
        String bytes =
            new String(
                ByteBufUtil.getBytes(result.batches().get(t).content()),
                StandardCharsets.ISO_8859_1);
        for (int other = 0; other < 3; other++) {
          boolean own = other == t;
          assertEquals(
              own,
              bytes.contains(secrets[other]),
              format + " batch " + tenants[t] + " holding " + secrets[other]);
          assertEquals(
              own,
              bytes.contains(tenants[other]),
              format + " batch " + tenants[t] + " holding " + tenants[other]);
        }
      }
      result.clear();
    }
  }

  @Test
  void aTenantUsingEverySymbolGetsTheRequestByteForByte() {
    V2RequestGenerator gen = new V2RequestGenerator(5);
    gen.tenantLabelPresence = 0;
    gen.unusualEncoding = 0;
    V2RequestGenerator.Generated g = gen.request(300, List.of("service_id"));
    RouteResult result =
        RoutingProperties.route(new V2TenantRouter(rules().build(), V2, MAX_OUTPUT), g.bytes());
    assertNull(result.error());
    assertEquals(List.of("anonymous"), tenants(result));
    assertArrayEquals(g.bytes(), ByteBufUtil.getBytes(result.batches().get(0).content()));
    result.clear();
  }

  @Test
  void removeLabelLeavesOutThePairAndSymbolsNoLongerReferenced() throws Exception {
    // "a" stays referenced by an exemplar label; "service_id" by nothing else.
    byte[] request =
        request(
            TABLE,
            series(refs(1, 2, 3, 4), sample(1, 1), exemplar(refs(7, 4))),
            series(refs(1, 2, 3, 5), sample(1, 1)));
    RouteResult result =
        RoutingProperties.route(
            new V2TenantRouter(rules().removeLabel(true).build(), V2, MAX_OUTPUT), request);
    assertNull(result.error());
    Request a = v2(result.batches().get(0));
    Request b = v2(result.batches().get(1));
    assertEquals(List.of("__name__", "up"), labels(a, 0));
    assertEquals(List.of("", "__name__", "up", "a", "x"), a.getSymbolsList());
    assertEquals(List.of("", "__name__", "up"), b.getSymbolsList());
    assertEquals(List.of("__name__", "up"), labels(b, 0));
    result.clear();
  }

  @Test
  void removeLabelOnlyRemovesTheDecidingLabelWhenTheTenantIsValid() throws Exception {
    byte[] request =
        request(new String[] {"", "service_id", "a|b"}, series(refs(1, 2), sample(1, 1)));
    RouteResult result =
        RoutingProperties.route(
            new V2TenantRouter(rules().removeLabel(true).build(), V2, MAX_OUTPUT), request);
    assertEquals(List.of("anonymous"), tenants(result));
    assertEquals(List.of("service_id", "a|b"), labels(v2(result.batches().get(0)), 0));
    assertEquals(1, result.defaulted(TenantProblem.INVALID_CHARACTER));
    result.clear();
  }

  @Test
  void prefixAppliesToTheTenantIdOnly() throws Exception {
    byte[] request = request(TABLE, series(refs(1, 2, 3, 4), sample(1, 1)));
    RouteResult result =
        RoutingProperties.route(
            new V2TenantRouter(rules().prefix("org-").build(), V2, MAX_OUTPUT), request);
    assertEquals(List.of("org-a"), tenants(result));
    assertEquals(
        List.of("__name__", "up", "service_id", "a"), labels(v2(result.batches().get(0)), 0));
    result.clear();
  }

  @Test
  void seriesWithoutTenantGoToTheDefaultTenantAreDroppedOrRejectTheRequest() throws Exception {
    // Series 1 has an empty service_id, which counts as absent.
    byte[] request =
        request(
            TABLE,
            series(refs(1, 2, 3, 4), sample(1, 1)),
            series(refs(1, 2, 3, 0), sample(1, 1)),
            series(refs(1, 2), sample(1, 1)));
    RouteResult def =
        RoutingProperties.route(new V2TenantRouter(rules().build(), V2, MAX_OUTPUT), request);
    assertEquals(List.of("a", "anonymous"), tenants(def));
    assertEquals(2, def.defaulted(TenantProblem.MISSING));
    def.clear();
    RouteResult drop =
        RoutingProperties.route(
            new V2TenantRouter(
                rules().missing(TenantRules.MissingPolicy.DROP).build(), V2, MAX_OUTPUT),
            request);
    assertEquals(List.of("a"), tenants(drop));
    assertEquals(2, drop.dropped(TenantProblem.MISSING));
    assertEquals(2, drop.droppedTotal());
    drop.clear();
    RouteResult reject =
        RoutingProperties.route(
            new V2TenantRouter(
                rules().missing(TenantRules.MissingPolicy.REJECT).build(), V2, MAX_OUTPUT),
            request);
    RequestError error = reject.error();
    assertNotNull(error);
    assertEquals(RequestError.Kind.NO_TENANT, error.kind());
    assertEquals("timeseries[1]", error.field());
    assertTrue(error.message().contains("service_id"), error::message);
    assertEquals(0, reject.batches().size());
    reject.clear();
  }

  @Test
  void copiesUnknownSeriesFieldsAndCreatedTimestamp() throws Exception {
    byte[] unknown =
        cat(createdTimestamp(1_699_999_000_000L), varintField(9, 42), str(12, "future"));
    byte[] request =
        request(
            TABLE,
            series(refs(1, 2, 3, 4), sample(1, 1), unknown),
            series(refs(1, 2, 3, 5), sample(1, 1)));
    RouteResult result =
        RoutingProperties.route(new V2TenantRouter(rules().build(), V2, MAX_OUTPUT), request);
    TimeSeries ts = v2(result.batches().get(0)).getTimeseries(0);
    assertEquals(1_699_999_000_000L, ts.getCreatedTimestamp());
    assertTrue(ts.getUnknownFields().hasField(9));
    assertTrue(ts.getUnknownFields().hasField(12));
    result.clear();
  }

  @Test
  void readsSymbolsThatFollowTheSeriesAndUnpackedRefs() throws Exception {
    byte[] request =
        cat(
            series(unpackedRefs(1, 2, 3, 4), sample(1, 1)),
            symbols("", "__name__", "up"),
            series(refs(1, 2), unpackedRefs(3, 5), sample(2, 2)),
            symbols("service_id", "a", "b"));
    RouteResult result =
        RoutingProperties.route(new V2TenantRouter(rules().build(), V2, MAX_OUTPUT), request);
    assertNull(result.error());
    assertEquals(List.of("a", "b"), tenants(result));
    assertEquals(
        List.of("__name__", "up", "service_id", "b"), labels(v2(result.batches().get(1)), 0));
    result.clear();
  }

  @Test
  void anEmptyRequestOrOneWithOnlySymbolsRoutesToNoBatch() {
    V2TenantRouter router = new V2TenantRouter(rules().build(), V2, MAX_OUTPUT);
    for (byte[] request : List.of(new byte[0], symbols("", "unused"))) {
      RouteResult result = RoutingProperties.route(router, request);
      assertNull(result.error());
      assertEquals(0, result.batches().size());
      assertEquals(0, result.seriesIn());
      result.clear();
    }
  }

  @Test
  void countsSamplesHistogramsAndExemplarsPerTenantForTheWrittenHeaders() {
    byte[] histogram = len(3, varintField(1, 5), varintField(15, 7));
    byte[] request =
        request(
            TABLE,
            series(
                refs(1, 2, 3, 4),
                sample(1, 1),
                sample(2, 2),
                exemplar(refs(7, 4)),
                metadata(1, 0, 0)),
            series(refs(1, 2, 3, 5), histogram, histogram),
            series(refs(1, 2, 3, 4), sample(3, 3), exemplar(), exemplar()));
    for (V2BatchEncoder.Format format : V2BatchEncoder.Format.values()) {
      RouteResult result =
          RoutingProperties.route(new V2TenantRouter(rules().build(), format, MAX_OUTPUT), request);
      TenantBatch a = result.batches().get(0);
      TenantBatch b = result.batches().get(1);
      assertEquals(2, a.series());
      assertEquals(3, a.samples());
      assertEquals(0, a.histograms());
      assertEquals(3, a.exemplars());
      assertEquals(1, b.series());
      assertEquals(0, b.samples());
      assertEquals(2, b.histograms());
      assertEquals(0, b.exemplars());
      assertEquals(1, result.metadataIn());
      result.clear();
    }
  }

  @Test
  void convertsToV1WithLabelsSortedByName() throws Exception {
    // Refs in the order service_id, __name__, team: v1 wants __name__, service_id, team.
    byte[] request = request(TABLE, series(refs(3, 4, 1, 2, 6, 7), sample(1, 1)));
    RouteResult result =
        RoutingProperties.route(new V2TenantRouter(rules().build(), V1, MAX_OUTPUT), request);
    WriteRequest w = v1(result.batches().get(0));
    List<String> names = new ArrayList<>();
    for (Label l : w.getTimeseries(0).getLabelsList()) {
      names.add(l.getName());
    }
    assertEquals(List.of("__name__", "service_id", "team"), names);
    assertEquals(1, w.getTimeseries(0).getSamplesCount());
    result.clear();
  }

  @Test
  void convertsMetadataToOneEntryPerDistinctFamilyMetadata() throws Exception {
    String[] table = {
      "",
      "__name__",
      "http_requests_total",
      "service_id",
      "a",
      "Requests.",
      "unused",
      "up",
      "seconds"
    };
    byte[] request =
        request(
            table,
            series(refs(1, 2, 3, 4), sample(1, 1), metadata(1, 5, 0)),
            series(refs(1, 2, 3, 4), sample(1, 1), metadata(1, 5, 0)),
            series(refs(1, 7, 3, 4), sample(1, 1), metadata(0, 0, 0)),
            series(refs(1, 7, 3, 4), sample(1, 1), metadata(2, 0, 8)),
            series(refs(3, 4), sample(1, 1), metadata(2, 0, 0)));
    RouteResult result =
        RoutingProperties.route(new V2TenantRouter(rules().build(), V1, MAX_OUTPUT), request);
    WriteRequest w = v1(result.batches().get(0));
    assertEquals(
        List.of(
            MetricMetadata.newBuilder()
                .setType(MetricMetadata.MetricType.COUNTER)
                .setMetricFamilyName("http_requests_total")
                .setHelp("Requests.")
                .build(),
            MetricMetadata.newBuilder()
                .setType(MetricMetadata.MetricType.GAUGE)
                .setMetricFamilyName("up")
                .setUnit("seconds")
                .build(),
            // No __name__: the family name stays empty and the downstream judges it.
            MetricMetadata.newBuilder().setType(MetricMetadata.MetricType.GAUGE).build()),
        w.getMetadataList());
    assertEquals(3, result.batches().get(0).metadata());
    assertEquals(5, w.getTimeseriesCount());
    result.clear();
  }

  @Test
  void convertsEveryGeneratedRequestLikeRoutingToV2AndConvertingEachBatch() throws Exception {
    for (long seed = 1; seed <= 20; seed++) {
      V2RequestGenerator gen = new V2RequestGenerator(seed);
      V2RequestGenerator.Generated g = gen.request(100, List.of("service_id"));
      TenantRules r = rules().removeLabel(seed % 2 == 0).build();
      RouteResult viaV2 = RoutingProperties.route(new V2TenantRouter(r, V2, MAX_OUTPUT), g.bytes());
      RouteResult direct =
          RoutingProperties.route(new V2TenantRouter(r, V1, MAX_OUTPUT), g.bytes());
      assertEquals(tenants(direct), tenants(viaV2));
      V2ToV1Converter converter = new V2ToV1Converter();
      for (int i = 0; i < direct.batches().size(); i++) {
        V2ToV1Converter.Conversion c =
            converter.convert(
                viaV2.batches().get(i).content(), PooledByteBufAllocator.DEFAULT, MAX_OUTPUT);
        try {
          assertNull(c.error());
          assertArrayEquals(
              ByteBufUtil.getBytes(direct.batches().get(i).content()),
              ByteBufUtil.getBytes(c.content()),
              "seed " + seed + " tenant " + direct.batches().get(i).tenant());
          assertEquals(direct.batches().get(i).counts(), c.counts());
        } finally {
          if (c.content() != null) {
            c.content().release();
          }
        }
      }
      viaV2.clear();
      direct.clear();
    }
  }

  @Test
  void seesTenantsOfEarlierRequestsAndStartsOverPastTheCacheBound() {
    V2TenantRouter router = new V2TenantRouter(rules().maxCachedTenants(2).build(), V2, MAX_OUTPUT);
    for (int round = 0; round < 3; round++) {
      for (String t : List.of("a", "b", "c")) {
        byte[] request =
            request(new String[] {"", "service_id", t}, series(refs(1, 2), sample(1, 1)));
        RouteResult result = RoutingProperties.route(router, request);
        assertEquals(List.of(t), tenants(result));
        result.clear();
      }
    }
  }

  @Test
  void directBuffersAreRoutedLikeHeapBuffers() throws Exception {
    V2RequestGenerator gen = new V2RequestGenerator(9);
    V2RequestGenerator.Generated g = gen.request(50, List.of("service_id"));
    V2TenantRouter router = new V2TenantRouter(rules().build(), V2, MAX_OUTPUT);
    ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer(g.bytes().length);
    direct.writeBytes(g.bytes());
    try {
      RouteResult result = router.route(direct, PooledByteBufAllocator.DEFAULT);
      V2RouteAssertions.assertRoutedLikeOracle(g.request(), rules().build(), result, V2);
      result.clear();
    } finally {
      direct.release();
    }
  }

  @Test
  void aSeriesWhoseRefsShrinkGetsAShorterLengthPrefix() throws Exception {
    // 300 symbols: the fillers A uses have refs >= 128 (two bytes) in the request, < 128 in A's
    // table,
    // so A's series and exemplar shrink below 128 bytes and their length prefixes to one byte.
    String[] table = new String[300];
    table[0] = "";
    table[1] = "service_id";
    table[2] = "a";
    table[3] = "b";
    for (int i = 4; i < table.length; i++) {
      table[i] = "f" + i;
    }
    long[] aRefs = new long[2 + 2 * 60];
    aRefs[0] = 1;
    aRefs[1] = 2;
    for (int k = 0; k < 60; k++) {
      aRefs[2 + 2 * k] = 150 + 2 * k;
      aRefs[3 + 2 * k] = 151 + 2 * k;
    }
    long[] exemplarRefs = java.util.Arrays.copyOfRange(aRefs, 2, aRefs.length);
    byte[] aSeries = series(refs(aRefs), sample(1, 1), exemplar(refs(exemplarRefs)));
    byte[] request = request(table, series(refs(1, 3, 4, 5), sample(1, 1)), aSeries);
    RouteResult result =
        RoutingProperties.route(new V2TenantRouter(rules().build(), V2, MAX_OUTPUT), request);
    assertNull(result.error());
    Request a = v2(result.batches().get(1));
    assertEquals(123, a.getSymbolsCount());
    List<String> want = new ArrayList<>();
    for (long r : aRefs) {
      want.add(table[(int) r]);
    }
    assertEquals(want, labels(a, 0));
    List<String> exemplar = new ArrayList<>();
    for (int r : a.getTimeseries(0).getExemplars(0).getLabelsRefsList()) {
      exemplar.add(a.getSymbols(r));
    }
    assertEquals(want.subList(2, want.size()), exemplar);
    // Exactly what protobuf writes for the same message: shortest length prefixes.
    assertArrayEquals(a.toByteArray(), ByteBufUtil.getBytes(result.batches().get(1).content()));
    result.clear();
  }
}
