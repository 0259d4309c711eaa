package io.prwrelay.server.ingress;

import static io.prwrelay.testing.V2RawProto.refs;
import static io.prwrelay.testing.V2RawProto.request;
import static io.prwrelay.testing.V2RawProto.sample;
import static io.prwrelay.testing.V2RawProto.series;
import static io.prwrelay.testing.V2RawProto.symbolInEverySeries;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testing.V2Oracle;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Remote Write 2.0 in queue mode: what is queued durably counts as written, queued PRW 2.0 records
 * replay after a restart as PRW 2.0, and as PRW 1.0 once an {@code auto} relay finds that the
 * downstream refuses 2.0.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteWrite2QueueModeTest {
  private static final String[] TABLE = {"", "__name__", "up", "service_id", "a", "b"};

  /** Tenant a: 2 samples; tenant b: 1 sample. */
  private static final byte[] BODY =
      request(
          TABLE,
          series(refs(1, 2, 3, 4), sample(1, 1), sample(2, 2)),
          series(refs(1, 2, 3, 5), sample(3, 3)));

  @TempDir Path dir;

  private Map<String, String> config(String protocol) {
    return Map.of(
        "relay.delivery.mode",
        "queue",
        "relay.delivery.queue.dir",
        dir.toString(),
        "relay.downstream.protocol",
        protocol);
  }

  /** Waits until {@code tenant} got {@code count} requests, and returns them. */
  private static List<Received> await(ScriptedDownstream d, String tenant, int count)
      throws Exception {
    Await.until(
        tenant + " got " + count + " requests",
        Duration.ofSeconds(20),
        () -> d.byTenant().getOrDefault(tenant, List.of()).size() >= count);
    return d.byTenant().get(tenant);
  }

  /** Queues the body while tenant a's downstream is down: the answer counts queued as written. */
  private void queueWhileTenantAIsDown(String protocol) throws Exception {
    try (RelayFixture f =
        new RelayFixture(config(protocol), d -> d.rule("a", () -> Reply.status(503, "down")))) {
      HttpResponse<String> r = f.writeV2(BODY);
      assertEquals(204, r.statusCode(), r.body());
      assertEquals(
          "3", r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written").orElseThrow());
      await(f.downstream, "b", 1);
    }
  }

  @Test
  void queuedV2RecordsReplayAsV2AfterARestart() throws Exception {
    queueWhileTenantAIsDown("v2");
    try (RelayFixture f = new RelayFixture(config("v2"))) {
      Received rec = await(f.downstream, "a", 1).get(0);
      assertEquals(RelayFixture.V2_CONTENT_TYPE, rec.header("Content-Type"));
      assertEquals("2.0.0", rec.header("X-Prometheus-Remote-Write-Version"));
      Request got = Request.parseFrom(rec.body());
      assertEquals(List.of("", "__name__", "up", "service_id", "a"), got.getSymbolsList());
      assertEquals(2, got.getTimeseries(0).getSamplesCount());
      assertEquals(List.of(), f.downstream.byTenant().getOrDefault("b", List.of()), "b is done");
    }
  }

  @Test
  void v2InputIsQueuedAndDeliveredAsV1ForAV1Downstream() throws Exception {
    try (RelayFixture f = new RelayFixture(config("v1"))) {
      HttpResponse<String> r = f.writeV2(BODY);
      assertEquals(204, r.statusCode(), r.body());
      Received rec = await(f.downstream, "a", 1).get(0);
      assertEquals("application/x-protobuf", rec.header("Content-Type"));
      Request sent = Request.parseFrom(BODY);
      assertEquals(
          V2Oracle.toV1(List.of(V2Oracle.resolve(sent.getTimeseries(0), sent.getSymbolsList()))),
          WriteRequest.parseFrom(rec.body()));
    }
  }

  @Test
  void queuedV1AndV2RecordsOfATenantNeverShareADownstreamRequest() throws Exception {
    byte[] v1 =
        RawProto.series(
            RawProto.label("__name__", "up"),
            RawProto.label("service_id", "a"),
            RawProto.sample(1, 1));
    try (RelayFixture f =
        new RelayFixture(config("v2"), d -> d.rule("a", () -> Reply.status(503, "down")))) {
      assertEquals(204, f.write(v1).statusCode());
      assertEquals(204, f.writeV2(BODY).statusCode());
      assertEquals(204, f.write(v1).statusCode());
      assertEquals(204, f.write(v1).statusCode());
    }
    try (RelayFixture f = new RelayFixture(config("v2"))) {
      List<Received> a = await(f.downstream, "a", 3);
      assertEquals(
          List.of("application/x-protobuf", RelayFixture.V2_CONTENT_TYPE, "application/x-protobuf"),
          a.stream().map(x -> x.header("Content-Type")).toList(),
          "in queue order; the two last PRW 1.0 records merged");
      assertEquals(1, WriteRequest.parseFrom(a.get(0).body()).getTimeseriesCount());
      assertEquals(1, Request.parseFrom(a.get(1).body()).getTimeseriesCount());
      assertEquals(2, WriteRequest.parseFrom(a.get(2).body()).getTimeseriesCount());
    }
  }

  @Test
  void queuedV2RecordsReplayConvertedAfterAFallbackTo415() throws Exception {
    queueWhileTenantAIsDown("auto");
    try (RelayFixture f =
        new RelayFixture(
            config("auto"), d -> d.script("a", Reply.status(415, "remote write 2.0 disabled")))) {
      List<Received> a = await(f.downstream, "a", 2);
      assertEquals(RelayFixture.V2_CONTENT_TYPE, a.get(0).header("Content-Type"));
      assertEquals("application/x-protobuf", a.get(1).header("Content-Type"));
      Request queued = Request.parseFrom(a.get(0).body());
      assertEquals(
          V2Oracle.toV1(
              List.of(V2Oracle.resolve(queued.getTimeseries(0), queued.getSymbolsList()))),
          WriteRequest.parseFrom(a.get(1).body()));
      String metrics = f.get("/metrics").body();
      assertTrue(metrics.contains("relay_downstream_protocol_fallbacks_total 1"), metrics);
      assertTrue(metrics.contains("relay_downstream_protocol{protocol=\"v1\"} 1"), metrics);
    }
  }

  @Test
  void aQueuedRecordThatWouldConvertPastTheBoundIsDroppedNotSent() throws Exception {
    // One 64 KiB symbol in 100 series of tenant t0: 67 KB as PRW 2.0, 6.5 MB as PRW 1.0.
    byte[] big = symbolInEverySeries("x".repeat(64 << 10), 100, 1);
    Map<String, String> config = new HashMap<>(config("auto"));
    config.put("relay.server.max-decompressed-bytes", Integer.toString(1 << 20));
    try (RelayFixture f =
        new RelayFixture(config, d -> d.rule("t0", () -> Reply.status(503, "down")))) {
      HttpResponse<String> r = f.writeV2(big);
      assertEquals(204, r.statusCode(), r.body());
    }
    try (RelayFixture f =
        new RelayFixture(
            config, d -> d.script("t0", Reply.status(415, "remote write 2.0 disabled")))) {
      await(f.downstream, "t0", 1);
      byte[] small =
          request(
              new String[] {"", "__name__", "up", "service_id", "t0"},
              series(refs(1, 2, 3, 4), sample(1, 1)));
      assertEquals(204, f.writeV2(small).statusCode());
      List<Received> t0 = await(f.downstream, "t0", 2);
      assertEquals(RelayFixture.V2_CONTENT_TYPE, t0.get(0).header("Content-Type"));
      assertEquals("application/x-protobuf", t0.get(1).header("Content-Type"));
      assertEquals(
          1,
          WriteRequest.parseFrom(t0.get(1).body()).getTimeseriesCount(),
          "the queued record was dropped, not converted; the next one is delivered");
      String metrics = f.get("/metrics").body();
      assertTrue(
          metrics.contains(
              "relay_tenant_series_dropped_total{reason=\"rejected\",tenant=\"t0\"} 100.0"),
          metrics);
    }
  }
}
