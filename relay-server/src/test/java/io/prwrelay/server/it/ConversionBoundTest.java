package io.prwrelay.server.it;

import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.V2RawProto.refs;
import static io.prwrelay.testing.V2RawProto.request;
import static io.prwrelay.testing.V2RawProto.sample;
import static io.prwrelay.testing.V2RawProto.series;
import static io.prwrelay.testing.V2RawProto.symbolInEverySeries;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantProblem;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.core.route.V2TenantRouter;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.TimeSeries;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testing.V2Oracle;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.xerial.snappy.Snappy;

/**
 * PRW 2.0 requests of a few kilobytes whose PRW 1.0 conversion or per-tenant PRW 2.0 requests would
 * be far larger, through a real relay socket with {@code relay.server.max-decompressed-bytes} at 1
 * MiB: one 64 KiB symbol referenced by 100 series of one tenant (the 886-byte request whose 1 MiB
 * symbol in 500 series took the relay to 500 MB, at a test's scale) or by one series of each of 100
 * tenants. Each is answered 400 naming the size, the bound and its key, before the output is built,
 * with nothing sent downstream; in every path that converts or rebuilds (routed, a trusted tenant's
 * whole request, per-tenant PRW 2.0, a lane converting after a 415). Afterwards the relay answers
 * another sender and {@code /-/healthy}; a request whose output is just under the bound is
 * delivered exactly; nothing leaks (the leak check fails the class). An output within the bound is
 * still reserved in the memory budget before it is built: one that could never fit one client's
 * share is answered 413 naming the key. The same attack at full size, from three connections at
 * once against the relay as a small container, is {@code lanes/ConversionBoundProcessTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConversionBoundTest {
  private static final int CAP = 1 << 20;
  private static final String BIG = "x".repeat(64 << 10);
  private static final TenantRules RULES = TenantRules.builder().build();
  private static final String KEY = "relay.server.max-decompressed-bytes=1048576";

  private static RelayFixture relay(String... overrides) throws Exception {
    Map<String, String> config = new HashMap<>();
    config.put("relay.server.max-decompressed-bytes", Integer.toString(CAP));
    config.put("relay.server.max-request-bytes", Integer.toString(CAP));
    for (int i = 0; i < overrides.length; i += 2) {
      config.put(overrides[i], overrides[i + 1]);
    }
    return new RelayFixture(config);
  }

  private static List<V2Oracle.ResolvedSeries> resolved(Request r) {
    List<V2Oracle.ResolvedSeries> out = new ArrayList<>();
    for (TimeSeries ts : r.getTimeseriesList()) {
      out.add(V2Oracle.resolve(ts, r.getSymbolsList()));
    }
    return out;
  }

  /** Bytes of the PRW 1.0 requests, one per tenant, the oracle converts {@code body} to. */
  private static long convertedSize(byte[] body) throws Exception {
    long size = 0;
    for (WriteRequest w :
        V2Oracle.expectedV1(Request.parseFrom(body), RULES, new EnumMap<>(TenantProblem.class))
            .values()) {
      size += w.getSerializedSize();
    }
    return size;
  }

  /**
   * Bytes of the PRW 2.0 requests, one per tenant, {@code body} is split into without a bound (the
   * router's batches, which its own tests compare with the oracle's).
   */
  private static long splitSize(byte[] body) {
    ByteBuf in = Unpooled.wrappedBuffer(body);
    RouteResult r =
        new V2TenantRouter(RULES, V2BatchEncoder.Format.V2, Integer.MAX_VALUE - 8)
            .route(in, UnpooledByteBufAllocator.DEFAULT);
    try {
      long size = 0;
      for (TenantBatch b : r.batches()) {
        size += b.content().readableBytes();
      }
      return size;
    } finally {
      r.clear();
      in.release();
    }
  }

  private static String tooLargeForV1(long size) {
    return "converting this PRW 2.0 request to PRW 1.0 would take "
        + size
        + " bytes, more than "
        + KEY
        + " (PRW 1.0 repeats a string in every series that references it)";
  }

  /**
   * The relay still serves: another sender's PRW 1.0 and PRW 2.0 writes are delivered (204), and
   * {@code /-/healthy} answers 200.
   */
  private static void assertStillServes(RelayFixture f) throws Exception {
    HttpResponse<String> v1 =
        f.write(RawProto.series(label("service_id", "other"), RawProto.sample(1, 1)));
    assertEquals(204, v1.statusCode(), v1.body());
    HttpResponse<String> v2 =
        f.writeV2(
            request(
                new String[] {"", "__name__", "up", "service_id", "other"},
                series(refs(1, 2, 3, 4), sample(2, 2))));
    assertEquals(204, v2.statusCode(), v2.body());
    assertEquals(200, f.get("/-/healthy").statusCode());
    assertEquals(2, f.downstream.byTenant().get("other").size());
  }

  @Test
  void aSymbolInEverySeriesIs400BeforeConversionAndNothingIsSent() throws Exception {
    byte[] body = symbolInEverySeries(BIG, 100, 1);
    assertTrue(Snappy.compress(body).length < 8 << 10, "a few kilobytes on the wire");
    long size = convertedSize(body);
    assertTrue(size > 6 * CAP, "converted: " + size);
    try (RelayFixture f = relay()) {
      HttpResponse<String> r = f.writeV2(body);
      assertEquals(400, r.statusCode(), r.body());
      assertEquals(tooLargeForV1(size), r.body().strip());
      assertEquals(
          "0", r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written").orElseThrow());
      assertEquals(List.of(), f.downstream.received(), "nothing is sent");
      String metrics = f.get("/metrics").body();
      assertTrue(
          metrics.contains("relay_series_rejected_total{reason=\"too_large\"} 100.0"), metrics);
      assertStillServes(f);
    }
  }

  @Test
  void aTrustedTenantsWholeRequestIs400BeforeConversion() throws Exception {
    byte[] body = symbolInEverySeries(BIG, 100, 1);
    try (RelayFixture f = relay("relay.tenant.trust-incoming-header", "true")) {
      HttpResponse<String> r = f.writeV2(body, "X-Scope-OrgID", "team-x");
      assertEquals(400, r.statusCode(), r.body());
      assertEquals(tooLargeForV1(convertedSize(body)), r.body().strip());
      assertEquals(List.of(), f.downstream.received(), "nothing is sent");
      assertStillServes(f);
    }
  }

  @Test
  void aSymbolInEveryTenantsTableIs400ForAPrw2Downstream() throws Exception {
    byte[] body = symbolInEverySeries(BIG, 100, 100);
    try (RelayFixture f = relay("relay.downstream.protocol", "v2")) {
      HttpResponse<String> r = f.writeV2(body);
      assertEquals(400, r.statusCode(), r.body());
      assertEquals(
          "splitting this PRW 2.0 request by tenant would take "
              + splitSize(body)
              + " bytes, more than "
              + KEY
              + " (each tenant's request carries its own copy of the symbols it references)",
          r.body().strip());
      assertEquals(List.of(), f.downstream.received(), "nothing is sent");
      assertStillServes(f);
    }
  }

  @Test
  void aConversionJustUnderTheBoundIsDeliveredExactly() throws Exception {
    // 15 copies of the symbol fit in 1 MiB, 16 do not.
    byte[] body = symbolInEverySeries(BIG, 15, 1);
    assertTrue(convertedSize(body) <= CAP);
    assertTrue(convertedSize(symbolInEverySeries(BIG, 16, 1)) > CAP);
    try (RelayFixture f = relay()) {
      HttpResponse<String> r = f.writeV2(body);
      assertEquals(204, r.statusCode(), r.body());
      List<Received> got = f.downstream.byTenant().get("t0");
      assertEquals(1, got.size());
      assertEquals(
          V2Oracle.toV1(resolved(Request.parseFrom(body))),
          WriteRequest.parseFrom(got.get(0).body()));
    }
  }

  @Test
  void perTenantPrw2RequestsJustUnderTheBoundAreDeliveredExactly() throws Exception {
    byte[] body = symbolInEverySeries(BIG, 15, 15);
    Map<String, List<V2Oracle.ResolvedSeries>> expected =
        V2Oracle.expectedSeries(Request.parseFrom(body), RULES, new EnumMap<>(TenantProblem.class));
    try (RelayFixture f = relay("relay.downstream.protocol", "v2")) {
      HttpResponse<String> r = f.writeV2(body);
      assertEquals(204, r.statusCode(), r.body());
      Map<String, List<Received>> got = f.downstream.byTenant();
      assertEquals(expected.keySet(), got.keySet());
      long total = 0;
      for (Map.Entry<String, List<Received>> e : got.entrySet()) {
        assertEquals(1, e.getValue().size());
        Request batch = Request.parseFrom(e.getValue().get(0).body());
        assertEquals(expected.get(e.getKey()), resolved(batch), e.getKey());
        total += batch.getSerializedSize();
      }
      assertTrue(total <= CAP && total > CAP - 2 * BIG.length(), "just under: " + total);
    }
  }

  @Test
  void aLaneConvertingAfterA415RefusesABatchOverTheBound() throws Exception {
    byte[] body = symbolInEverySeries(BIG, 100, 1);
    try (RelayFixture f = relay("relay.downstream.protocol", "auto")) {
      f.downstream.refuseRemoteWrite2();
      // Routed as one PRW 2.0 request no larger than the sender's; converting it would not fit.
      HttpResponse<String> r = f.writeV2(body);
      assertEquals(400, r.statusCode(), r.body());
      assertTrue(r.body().contains("t0"), r.body());
      assertTrue(
          r.body()
              .contains(
                  "cannot convert the batch to Remote Write 1.0: "
                      + tooLargeForV1(convertedSize(body))),
          r.body());
      List<Received> got = f.downstream.received();
      assertEquals(1, got.size(), "the PRW 2.0 attempt that was refused, and nothing converted");
      assertEquals(RelayFixture.V2_CONTENT_TYPE, got.get(0).header("Content-Type"));

      // Now in PRW 1.0: refused while routing, as for a PRW 1.0 downstream.
      HttpResponse<String> again = f.writeV2(body);
      assertEquals(400, again.statusCode(), again.body());
      assertEquals(tooLargeForV1(convertedSize(body)), again.body().strip());
      assertEquals(1, f.downstream.received().size());
      assertStillServes(f);
    }
  }

  @Test
  void aConversionThatCouldNeverFitOneClientsShareOfTheMemoryIs413NamingTheKey() throws Exception {
    // 40 copies of the symbol: 2.5 MiB once converted, within a decompressed-size cap of 8 MiB,
    // beyond the 1 MiB of request memory one client may hold.
    byte[] body = symbolInEverySeries(BIG, 40, 1);
    long compressed = Snappy.compress(body).length;
    try (RelayFixture f =
        relay(
            "relay.server.max-decompressed-bytes", Integer.toString(8 << 20),
            "relay.server.max-inflight-bytes", Integer.toString(4 << 20),
            "relay.server.max-inflight-bytes-per-client", Integer.toString(CAP))) {
      HttpResponse<String> r = f.writeV2(body);
      assertEquals(413, r.statusCode(), r.body());
      assertEquals(
          "the request takes "
              + (compressed + body.length + convertedSize(body))
              + " bytes compressed, decompressed and rebuilt as tenant requests, more than one"
              + " client may hold (relay.server.max-inflight-bytes-per-client=1048576)",
          r.body().strip());
      assertEquals(List.of(), f.downstream.received(), "nothing is sent");
      String metrics = f.get("/metrics").body();
      assertTrue(
          metrics.contains("relay_inflight_rejected_total{reason=\"too_large\"} 1.0"), metrics);
      assertStillServes(f);
    }
  }
}
