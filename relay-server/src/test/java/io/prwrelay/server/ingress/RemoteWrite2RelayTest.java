package io.prwrelay.server.ingress;

import static io.prwrelay.testing.V2RawProto.refs;
import static io.prwrelay.testing.V2RawProto.request;
import static io.prwrelay.testing.V2RawProto.sample;
import static io.prwrelay.testing.V2RawProto.series;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.Zstd;
import io.prwrelay.core.route.TenantProblem;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.TimeSeries;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.V2Oracle;
import io.prwrelay.testing.V2Oracle.ResolvedExemplar;
import io.prwrelay.testing.V2Oracle.ResolvedSeries;
import io.prwrelay.testing.V2RequestGenerator;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A Remote Write 2.0 sender through a real relay socket to a {@link
 * io.prwrelay.testkit.ScriptedDownstream}: per-tenant outputs checked against the oracle, in each
 * {@code relay.downstream.protocol}, and the sender's answer with its {@code *-Written} headers.
 */
class RemoteWrite2RelayTest {
  private static final List<String> LABELS = List.of("service_id");
  private static final TenantRules RULES = TenantRules.builder().labels(LABELS).build();
  private static final String V1_TYPE = "application/x-protobuf";

  /** The symbols of the series {@link #upOf} writes. */
  private static final String[] UP_AB = {"", "__name__", "up", "service_id", "a", "b"};

  /** The series {@code up{service_id="<tenant>"}}, tenant "a" or "b", over {@link #UP_AB}. */
  private static byte[] upOf(String tenant, byte[]... samples) {
    byte[][] parts = new byte[samples.length + 1][];
    parts[0] = refs(1, 2, 3, Arrays.asList(UP_AB).indexOf(tenant));
    System.arraycopy(samples, 0, parts, 1, samples.length);
    return series(parts);
  }

  private static V2RequestGenerator.Generated generated(long seed, int series) {
    return new V2RequestGenerator(seed).request(series, LABELS);
  }

  /** Samples, histograms and exemplars of a request, as the Written headers count them. */
  private static long[] totals(Request r) {
    long[] t = new long[3];
    for (TimeSeries ts : r.getTimeseriesList()) {
      t[0] += ts.getSamplesCount();
      t[1] += ts.getHistogramsCount();
      t[2] += ts.getExemplarsCount();
    }
    return t;
  }

  /** Asserts the answer's status and its samples, histograms and exemplars written headers. */
  private static void assertAnswered(HttpResponse<String> r, int status, long... written) {
    assertEquals(status, r.statusCode(), r.body());
    assertWritten(r, written);
  }

  private static void assertWritten(HttpResponse<String> r, long... expected) {
    long[] got = {
      Long.parseLong(r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written").get()),
      Long.parseLong(r.headers().firstValue("X-Prometheus-Remote-Write-Histograms-Written").get()),
      Long.parseLong(r.headers().firstValue("X-Prometheus-Remote-Write-Exemplars-Written").get())
    };
    assertEquals(List.of(expected[0], expected[1], expected[2]), List.of(got[0], got[1], got[2]));
  }

  /** The strings a tenant's own series reference: the only symbols its request may carry. */
  private static Set<String> ownSymbols(List<ResolvedSeries> series) {
    Set<String> s = new HashSet<>();
    s.add("");
    for (ResolvedSeries r : series) {
      s.addAll(r.labels());
      for (ResolvedExemplar e : r.exemplars()) {
        s.addAll(e.labels());
      }
      if (r.metadata() != null) {
        s.add(r.metadata().help());
        s.add(r.metadata().unit());
      }
    }
    return s;
  }

  private static List<ResolvedSeries> resolved(Request r) {
    List<ResolvedSeries> out = new ArrayList<>();
    for (TimeSeries ts : r.getTimeseriesList()) {
      out.add(V2Oracle.resolve(ts, r.getSymbolsList()));
    }
    return out;
  }

  /** Checks that each tenant got one PRW 2.0 request holding exactly its series, isolated. */
  private static void assertV2PerTenant(
      Map<String, List<ResolvedSeries>> expected, Map<String, List<Received>> got)
      throws Exception {
    assertEquals(expected.keySet(), got.keySet());
    for (Map.Entry<String, List<Received>> e : got.entrySet()) {
      String tenant = e.getKey();
      assertEquals(1, e.getValue().size(), "requests to " + tenant);
      Received rec = e.getValue().get(0);
      assertEquals(RelayFixture.V2_CONTENT_TYPE, rec.header("Content-Type"));
      assertEquals("2.0.0", rec.header("X-Prometheus-Remote-Write-Version"));
      assertEquals("snappy", rec.header("Content-Encoding"));
      Request batch = Request.parseFrom(rec.body());
      assertEquals("", batch.getSymbols(0), "first symbol");
      assertEquals(expected.get(tenant), resolved(batch), "series of " + tenant);
      assertEquals(
          ownSymbols(expected.get(tenant)),
          new HashSet<>(batch.getSymbolsList()),
          "symbols of " + tenant + ": only those its own series reference");
    }
  }

  @ParameterizedTest
  @ValueSource(longs = {11, 21, 31})
  void v2SenderToV1DownstreamGetsEachTenantsSeriesConverted(long seed) throws Exception {
    try (RelayFixture f = new RelayFixture()) {
      V2RequestGenerator.Generated g = generated(seed, 80);
      long[] totals = totals(g.request());
      assertTrue(totals[1] > 0 && totals[2] > 0, "histograms and exemplars are part of the run");
      HttpResponse<String> r = f.writeV2(g.bytes());
      assertAnswered(r, 204, totals);
      Map<String, WriteRequest> expected =
          V2Oracle.expectedV1(g.request(), RULES, new EnumMap<>(TenantProblem.class));
      Map<String, List<Received>> got = f.downstream.byTenant();
      assertEquals(expected.keySet(), got.keySet());
      for (Map.Entry<String, List<Received>> e : got.entrySet()) {
        assertEquals(1, e.getValue().size(), "requests to " + e.getKey());
        Received rec = e.getValue().get(0);
        assertEquals(V1_TYPE, rec.header("Content-Type"));
        assertEquals("0.1.0", rec.header("X-Prometheus-Remote-Write-Version"));
        assertEquals(expected.get(e.getKey()), WriteRequest.parseFrom(rec.body()), e.getKey());
      }
    }
  }

  @Test
  void zstdV2RequestIsRelayedLikeSnappy() throws Exception {
    try (RelayFixture f = new RelayFixture()) {
      V2RequestGenerator.Generated g = generated(12, 20);
      HttpResponse<String> r = f.writeV2Compressed(Zstd.compress(g.bytes()), "zstd");
      assertAnswered(r, 204, totals(g.request()));
      assertEquals(
          V2Oracle.expectedV1(g.request(), RULES, new EnumMap<>(TenantProblem.class)).keySet(),
          f.downstream.byTenant().keySet());
    }
  }

  @ParameterizedTest
  @ValueSource(longs = {13, 23, 33})
  void v2SenderToV2DownstreamGetsOneIsolatedRequestPerTenant(long seed) throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.protocol", "v2"))) {
      V2RequestGenerator.Generated g = generated(seed, 80);
      HttpResponse<String> r = f.writeV2(g.bytes());
      assertAnswered(r, 204, totals(g.request()));
      assertV2PerTenant(
          V2Oracle.expectedSeries(g.request(), RULES, new EnumMap<>(TenantProblem.class)),
          f.downstream.byTenant());
    }
  }

  @Test
  void noSymbolOfOneTenantReachesAnotherTenantsRequest() throws Exception {
    String[] table = {"", "__name__", "up", "service_id", "a", "b", "secret", "only-a", "only-b"};
    byte[] body =
        request(
            table,
            series(refs(1, 2, 6, 7, 3, 4), sample(1, 1)),
            series(refs(1, 2, 6, 8, 3, 5), sample(2, 2)));
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.protocol", "v2"))) {
      assertEquals(204, f.writeV2(body).statusCode());
      Map<String, List<Received>> got = f.downstream.byTenant();
      Request a = Request.parseFrom(got.get("a").get(0).body());
      Request b = Request.parseFrom(got.get("b").get(0).body());
      assertEquals(
          Set.of("", "__name__", "up", "secret", "only-a", "service_id", "a"),
          new HashSet<>(a.getSymbolsList()));
      assertEquals(
          Set.of("", "__name__", "up", "secret", "only-b", "service_id", "b"),
          new HashSet<>(b.getSymbolsList()));
      assertFalse(b.getSymbolsList().contains("only-a"));
      assertFalse(a.getSymbolsList().contains("only-b"));
    }
  }

  @Test
  void removeLabelAndPrefixApplyToV2Requests() throws Exception {
    TenantRules rules = TenantRules.builder().labels(LABELS).prefix("p-").removeLabel(true).build();
    try (RelayFixture f =
        new RelayFixture(
            Map.of(
                "relay.downstream.protocol", "v2",
                "relay.tenant.prefix", "p-",
                "relay.tenant.remove-label", "true"))) {
      V2RequestGenerator.Generated g = generated(14, 60);
      assertEquals(204, f.writeV2(g.bytes()).statusCode());
      assertV2PerTenant(
          V2Oracle.expectedSeries(g.request(), rules, new EnumMap<>(TenantProblem.class)),
          f.downstream.byTenant());
    }
  }

  @Test
  void trustedTenantHeaderSendsAWholeV2RequestToThatTenant() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.tenant.trust-incoming-header", "true"))) {
      V2RequestGenerator.Generated g = generated(15, 40);
      HttpResponse<String> r = f.writeV2(g.bytes(), "X-Scope-OrgID", "team-x");
      assertAnswered(r, 204, totals(g.request()));
      List<Received> got = f.downstream.byTenant().get("team-x");
      assertEquals(Set.of("team-x"), f.downstream.byTenant().keySet());
      assertEquals(1, got.size());
      assertEquals(V2Oracle.toV1(resolved(g.request())), WriteRequest.parseFrom(got.get(0).body()));
    }
  }

  @Test
  void autoFallsBackToV1OnA415AndRemembersIt() throws Exception {
    byte[] first = request(UP_AB, upOf("a", sample(1, 1), sample(2, 2)));
    byte[] second = request(UP_AB, upOf("a", sample(3, 3)), upOf("b", sample(4, 4)));
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.protocol", "auto"))) {
      f.downstream.script("a", Reply.status(415, "remote write 2.0 is not enabled"));
      HttpResponse<String> r = f.writeV2(first);
      assertAnswered(r, 204, 2, 0, 0);
      List<Received> a = f.downstream.byTenant().get("a");
      assertEquals(
          List.of(RelayFixture.V2_CONTENT_TYPE, V1_TYPE),
          a.stream().map(x -> x.header("Content-Type")).toList(),
          "a PRW 2.0 attempt answered 415, then the same series as PRW 1.0");
      assertEquals(2, WriteRequest.parseFrom(a.get(1).body()).getTimeseries(0).getSamplesCount());

      assertEquals(204, f.writeV2(second).statusCode());
      for (Received rec : f.downstream.received().subList(2, 4)) {
        assertEquals(V1_TYPE, rec.header("Content-Type"), "remembered: sent as PRW 1.0 at once");
      }
      String metrics = f.get("/metrics").body();
      assertTrue(metrics.contains("relay_downstream_protocol{protocol=\"v1\"} 1"), metrics);
      assertTrue(metrics.contains("relay_downstream_protocol{protocol=\"v2\"} 0"), metrics);
      assertTrue(metrics.contains("relay_downstream_protocol_fallbacks_total 1"), metrics);
    }
  }

  @Test
  void autoInFrontOfADownstreamThatRefusesV2DeliversEveryTenantAsV1() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.protocol", "auto"))) {
      f.downstream.refuseRemoteWrite2();
      V2RequestGenerator.Generated g = generated(17, 80);
      HttpResponse<String> r = f.writeV2(g.bytes());
      assertAnswered(r, 204, totals(g.request()));
      Map<String, WriteRequest> expected =
          V2Oracle.expectedV1(g.request(), RULES, new EnumMap<>(TenantProblem.class));
      Map<String, List<Received>> got = f.downstream.byTenant();
      assertEquals(expected.keySet(), got.keySet());
      for (Map.Entry<String, List<Received>> e : got.entrySet()) {
        List<Received> list = e.getValue();
        Received last = list.get(list.size() - 1);
        assertEquals(V1_TYPE, last.header("Content-Type"), e.getKey());
        assertEquals(expected.get(e.getKey()), WriteRequest.parseFrom(last.body()), e.getKey());
        for (Received earlier : list.subList(0, list.size() - 1)) {
          assertEquals(RelayFixture.V2_CONTENT_TYPE, earlier.header("Content-Type"));
        }
      }
      int before = f.downstream.received().size();
      assertEquals(204, f.writeV2(generated(18, 40).bytes()).statusCode());
      for (Received rec : f.downstream.received().subList(before, f.downstream.received().size())) {
        assertEquals(V1_TYPE, rec.header("Content-Type"), "no PRW 2.0 attempt after the fallback");
      }
      String metrics = f.get("/metrics").body();
      assertTrue(metrics.contains("relay_downstream_protocol{protocol=\"v1\"} 1"), metrics);
    }
  }

  @Test
  void concurrentV2RequestsOfOneTenantAreNeverMerged() throws Exception {
    String[] table = {"", "__name__", "m0", "m1", "m2", "m3", "m4", "m5", "service_id", "a"};
    try (RelayFixture f =
        new RelayFixture(
            Map.of(
                "relay.downstream.protocol", "v2",
                "relay.lanes.max-concurrent-sends", "1"))) {
      f.downstream.rule("a", () -> Reply.slow(Duration.ofMillis(100)));
      List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        byte[] body = request(table, series(refs(1, 2 + i, 8, 9), sample(i, i)));
        answers.add(f.writeV2Async(body));
      }
      for (CompletableFuture<HttpResponse<String>> a : answers) {
        assertEquals(204, a.get(30, TimeUnit.SECONDS).statusCode());
      }
      List<Received> got = f.downstream.byTenant().get("a");
      assertEquals(6, got.size(), "one downstream request per sender request");
      for (Received rec : got) {
        Request batch = Request.parseFrom(rec.body());
        assertEquals(1, batch.getTimeseriesCount());
        assertEquals(
            5, batch.getSymbolsCount(), "its own table: \"\", __name__, mN, service_id, a");
      }
    }
  }

  @Test
  void writtenHeadersSumTheDownstreamsOwnCountsAndTheRelaysForTheRest() throws Exception {
    byte[] body =
        request(
            UP_AB,
            upOf("a", sample(1, 1), sample(2, 2)),
            upOf("b", sample(3, 3), sample(4, 4), sample(5, 5)));
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.protocol", "v2"))) {
      f.downstream.script(
          "b",
          new Reply(
              200,
              Map.of(
                  "X-Prometheus-Remote-Write-Samples-Written", "30",
                  "X-Prometheus-Remote-Write-Exemplars-Written", "4"),
              "",
              Duration.ZERO,
              false));
      HttpResponse<String> r = f.writeV2(body);
      // a: the relay's count (2 samples); b: its own headers, histograms from the relay (0).
      assertAnswered(r, 204, 32, 0, 4);
    }
  }

  @Test
  void partialWriteIsNeverAnswered2xxAndReportsWhatWasWritten() throws Exception {
    String[] table = {"", "__name__", "up", "service_id", "a", "b", "c"};
    byte[] rejected =
        request(
            table,
            series(refs(1, 2, 3, 4), sample(1, 1), sample(2, 2)),
            series(refs(1, 2, 3, 5), sample(3, 3)));
    byte[] unavailable =
        request(
            table, series(refs(1, 2, 3, 4), sample(1, 1)), series(refs(1, 2, 3, 6), sample(3, 3)));
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.protocol", "v2"))) {
      f.downstream.script("b", Reply.status(400, "out of order sample"));
      f.downstream.rule("c", () -> Reply.status(500, "ingester down"));
      HttpResponse<String> r = f.writeV2(rejected);
      assertEquals(400, r.statusCode(), r.body());
      assertTrue(r.body().contains("out of order sample"), r.body());
      assertWritten(r, 2, 0, 0);
      r = f.writeV2(unavailable);
      assertAnswered(r, 503, 1, 0, 0);
    }
  }

  @Test
  void invalidV2RequestIs400NamingTheSeriesAndTheRef() throws Exception {
    String[] table = {"", "__name__", "up", "service_id", "a"};
    byte[] body =
        request(
            table, series(refs(1, 2, 3, 4), sample(1, 1)), series(refs(1, 2, 3, 9), sample(2, 2)));
    try (RelayFixture f = new RelayFixture()) {
      HttpResponse<String> r = f.writeV2(body);
      assertEquals(400, r.statusCode(), r.body());
      assertTrue(r.body().contains("timeseries[1].labels_refs[3]"), r.body());
      assertTrue(r.body().contains("ref 9 is out of range"), r.body());
      assertWritten(r, 0, 0, 0);
      r = f.writeV2(request(new String[] {"x", "__name__"}, series(refs(1, 0), sample(1, 1))));
      assertEquals(400, r.statusCode(), r.body());
      assertEquals(List.of(), f.downstream.received(), "nothing invalid is forwarded");
    }
  }

  @Test
  void invalidV2RequestWithATrustedTenantIs400() throws Exception {
    try (RelayFixture f =
        new RelayFixture(
            Map.of(
                "relay.tenant.trust-incoming-header", "true", "relay.downstream.protocol", "v2"))) {
      byte[] body =
          request(new String[] {"", "__name__", "up"}, series(refs(1, 2, 7), sample(1, 1)));
      HttpResponse<String> r = f.writeV2(body, "X-Scope-OrgID", "team-x");
      assertEquals(400, r.statusCode(), r.body());
      assertTrue(r.body().contains("timeseries[0]"), r.body());
      assertEquals(List.of(), f.downstream.received());
    }
  }

  @Test
  void retryOfAV2BodySkipsTenantsTheLedgerKnowsWereDelivered() throws Exception {
    byte[] body = request(UP_AB, upOf("a", sample(1, 1)), upOf("b", sample(2, 2)));
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.protocol", "v2"))) {
      f.downstream.script("b", Reply.status(429, "rate limited"));
      HttpResponse<String> r = f.writeV2(body);
      assertAnswered(r, 429, 1, 0, 0);
      r = f.writeV2(body);
      assertAnswered(r, 204, 2, 0, 0);
      assertEquals(1, f.downstream.byTenant().get("a").size(), "a is not sent again");
      assertEquals(2, f.downstream.byTenant().get("b").size());
    }
  }

  @Test
  void v1SenderIsAnsweredWithoutWrittenHeadersAndSentAsV1EvenInV2Mode() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.protocol", "v2"))) {
      byte[] v1 =
          io.prwrelay.testing.RawProto.series(
              io.prwrelay.testing.RawProto.label("__name__", "m"),
              io.prwrelay.testing.RawProto.label("service_id", "a"),
              io.prwrelay.testing.RawProto.sample(1, 1));
      HttpResponse<String> r = f.write(v1);
      assertEquals(204, r.statusCode(), r.body());
      assertTrue(r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written").isEmpty());
      assertEquals(V1_TYPE, f.downstream.received().get(0).header("Content-Type"));
    }
  }
}
