package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.Zstd;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.ForwardedRequests;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testing.V2RawProto;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request whose series all go to one tenant, with nothing in it to change, reaches the downstream
 * as the very bytes the sender sent: no re-encode, no re-compress. The bodies here are snappy
 * blocks of literals only, which the relay's own compressor never writes, so a relay that
 * decompressed and compressed again would send other bytes. Anything that has to change (a removed
 * label, another encoding, a second tenant, a field the protocol does not define) is sent as a
 * batch the relay built, and the delivery rules (retries, the ledger, queue mode) treat a forwarded
 * body like any batch.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ForwardWholeTest {
  private static final String FORWARDED = "relay_requests_forwarded_whole_total";

  @TempDir Path dir;

  /** A PRW 1.0 request of {@code series} series per tenant, tenants interleaved. */
  private static byte[] request(int series, String... tenants) {
    WriteRequestEncoder e = new WriteRequestEncoder();
    for (int i = 0; i < series; i++) {
      for (String t : tenants) {
        e.beginSeries()
            .label("__name__", "http_requests_total")
            .label("instance", "host-" + i)
            .label("service_id", t)
            .sample(i, 1_700_000_000_000L + i)
            .endSeries();
      }
    }
    return e.toByteArray();
  }

  /**
   * A valid snappy block of {@code raw} made of literal elements only (of up to 64 KiB each), as no
   * compressor would write it.
   */
  static byte[] literalBlock(byte[] raw) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (long v = raw.length; ; v >>>= 7) {
      if (v < 0x80) {
        out.write((int) v);
        break;
      }
      out.write((int) (v & 0x7F) | 0x80);
    }
    for (int at = 0; at < raw.length; at += 1 << 16) {
      int n = Math.min(1 << 16, raw.length - at);
      out.write(61 << 2); // a literal whose length - 1 follows in two bytes, little-endian
      out.write((n - 1) & 0xFF);
      out.write((n - 1) >>> 8);
      out.write(raw, at, n);
    }
    return out.toByteArray();
  }

  private static double metric(RelayFixture f, String series) {
    return Scrape.value(f.relay.metrics().scrape(), series);
  }

  private static void assertAnswered(int status, HttpResponse<String> r) {
    assertEquals(status, r.statusCode(), r::body);
  }

  @Test
  void singleTenantSnappyRequestReachesTheDownstreamAsTheBytesSent() throws Exception {
    byte[] request = request(200, "team-a");
    byte[] body = literalBlock(request);
    try (RelayFixture f = new RelayFixture()) {
      assertAnswered(204, f.writeCompressed(body, "snappy"));
      List<Received> got = f.downstream.received();
      assertEquals(1, got.size());
      Received r = got.get(0);
      ForwardedRequests.assertPrw1Push(r);
      assertEquals("team-a", r.tenant());
      assertArrayEquals(body, r.compressed());
      assertArrayEquals(request, r.body());
      assertEquals(1.0, metric(f, FORWARDED));
    }
  }

  @Test
  void trustedTenantHeaderForwardsTheBodyAsSentToThatTenant() throws Exception {
    byte[] request = request(20, "a", "b");
    byte[] body = literalBlock(request);
    try (RelayFixture f = new RelayFixture(Map.of("relay.tenant.trust-incoming-header", "true"))) {
      assertAnswered(204, f.writeCompressed(body, "snappy", "X-Scope-OrgID", "team-z"));
      Received r = f.downstream.received().get(0);
      assertEquals("team-z", r.tenant());
      assertArrayEquals(body, r.compressed());
      assertEquals(1.0, metric(f, FORWARDED));
    }
  }

  @Test
  void remoteWrite2RequestToAV2DownstreamIsForwardedAsSentAndToAV1DownstreamConverted()
      throws Exception {
    String[] table = {"", "__name__", "up", "service_id", "a"};
    byte[] request =
        V2RawProto.request(
            table,
            V2RawProto.series(V2RawProto.refs(1, 2, 3, 4), V2RawProto.sample(1, 1)),
            V2RawProto.series(V2RawProto.refs(3, 4, 1, 2), V2RawProto.sample(2, 2)));
    byte[] body = literalBlock(request);
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.protocol", "v2"))) {
      assertAnswered(204, f.writeV2Compressed(body, "snappy"));
      Received r = f.downstream.received().get(0);
      assertEquals(RelayFixture.V2_CONTENT_TYPE, r.header("Content-Type"));
      assertArrayEquals(body, r.compressed());
      assertEquals(1.0, metric(f, FORWARDED));
    }
    try (RelayFixture f = new RelayFixture()) {
      assertAnswered(204, f.writeV2Compressed(body, "snappy"));
      Received r = f.downstream.received().get(0);
      assertEquals(2, WriteRequest.parseFrom(r.body()).getTimeseriesCount());
      assertEquals(0.0, metric(f, FORWARDED));
    }
  }

  @Test
  void zstdRequestOfOneTenantIsSentAsItsSnappyCompressedSelf() throws Exception {
    byte[] request = request(200, "team-a");
    try (RelayFixture f = new RelayFixture()) {
      assertAnswered(204, f.writeCompressed(Zstd.compress(request), "zstd"));
      Received r = f.downstream.received().get(0);
      assertEquals("snappy", r.header("Content-Encoding"));
      assertArrayEquals(request, r.body());
      assertEquals(0.0, metric(f, FORWARDED));
    }
  }

  @Test
  void requestThatMustChangeIsSentAsABatchTheRelayBuilt() throws Exception {
    byte[] oneTenant = request(50, "team-a");
    try (RelayFixture f = new RelayFixture(Map.of("relay.tenant.remove-label", "true"))) {
      assertAnswered(204, f.writeCompressed(literalBlock(oneTenant), "snappy"));
      WriteRequest sent = WriteRequest.parseFrom(f.downstream.received().get(0).body());
      assertEquals(50, sent.getTimeseriesCount());
      sent.getTimeseries(0)
          .getLabelsList()
          .forEach(l -> assertFalse(l.getName().contains("service")));
      assertEquals(0.0, metric(f, FORWARDED));
    }
    byte[] unknownField = new byte[oneTenant.length + 3];
    System.arraycopy(oneTenant, 0, unknownField, 0, oneTenant.length);
    // Field 1000, varint 1: Cortex's skip_label_name_validation, which a sender must not set.
    unknownField[oneTenant.length] = (byte) 0xC0;
    unknownField[oneTenant.length + 1] = 0x3E;
    unknownField[oneTenant.length + 2] = 1;
    byte[] twoTenants = request(50, "team-a", "team-b");
    try (RelayFixture f = new RelayFixture()) {
      assertAnswered(204, f.writeCompressed(literalBlock(unknownField), "snappy"));
      assertArrayEquals(oneTenant, f.downstream.received().get(0).body());
      assertAnswered(204, f.writeCompressed(literalBlock(twoTenants), "snappy"));
      Map<String, List<Received>> byTenant = f.downstream.byTenant();
      assertEquals(2, byTenant.get("team-a").size());
      assertEquals(1, byTenant.get("team-b").size());
      assertEquals(0.0, metric(f, FORWARDED));
    }
  }

  @Test
  void forwardedBodyIsSentAgainAsItCameAfterA5xx() throws Exception {
    byte[] body = literalBlock(request(100, "team-a"));
    try (RelayFixture f =
        new RelayFixture(
            Map.of(), d -> d.script("team-a", Reply.status(503, "busy"), Reply.status(200)))) {
      assertAnswered(204, f.writeCompressed(body, "snappy"));
      List<Received> got = f.downstream.received();
      assertEquals(2, got.size());
      for (Received r : got) {
        assertArrayEquals(body, r.compressed());
      }
    }
  }

  @Test
  void throttledForwardedBodyIsRecognisedWhenTheSenderRetriesIt() throws Exception {
    // relay.delivery.throttled.policy=drop (default), retries 1: the ledger knows the body by its
    // hash, so the same body throttled again is answered 400 and the sender moves on.
    byte[] body = literalBlock(request(100, "team-a"));
    try (RelayFixture f =
        new RelayFixture(
            Map.of(),
            d -> d.rule("team-a", () -> Reply.status(429, "ingestion rate limit exceeded")))) {
      assertAnswered(429, f.writeCompressed(body, "snappy"));
      HttpResponse<String> retry = f.writeCompressed(body, "snappy");
      assertAnswered(400, retry);
      assertTrue(retry.body().contains("team-a"), retry.body());
      List<Received> got = f.downstream.received();
      assertEquals(2, got.size());
      for (Received r : got) {
        assertArrayEquals(body, r.compressed());
      }
      assertEquals(2.0, metric(f, FORWARDED));
    }
  }

  @Test
  void queueModeQueuesTheForwardedBodyAndDrainsItAsItCame() throws Exception {
    byte[] body = literalBlock(request(100, "team-a"));
    Map<String, String> config =
        Map.of("relay.delivery.mode", "queue", "relay.delivery.queue.dir", dir.toString());
    try (RelayFixture f =
        new RelayFixture(
            config, d -> d.script("team-a", Reply.status(503, "down"), Reply.status(503)))) {
      assertAnswered(204, f.writeCompressed(body, "snappy"));
      List<Received> got = awaitDelivered(f.downstream, "team-a");
      for (Received r : got) {
        assertArrayEquals(body, r.compressed());
      }
      assertEquals(1.0, metric(f, FORWARDED));
    }
  }

  /** Waits for {@code tenant}'s first request answered 2xx (the scripts run out into 200). */
  private static List<Received> awaitDelivered(ScriptedDownstream d, String tenant)
      throws Exception {
    Await.until(
        tenant + " delivered",
        Duration.ofSeconds(30),
        () -> d.counts().get(tenant) != null && d.counts().get(tenant).requests() > 0);
    return d.byTenant().get(tenant);
  }
}
