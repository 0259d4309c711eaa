package io.prwrelay.server.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.testing.RawProto;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import io.prwrelay.testkit.ScriptedDownstream.TenantCount;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

/** The testkit's downstream, as the relay, the demo and the load generator see it. */
class ScriptedDownstreamTest {
  private final HttpClient http = HttpClient.newHttpClient();

  private static byte[] request(int series, String name) {
    WriteRequestEncoder encoder = new WriteRequestEncoder();
    for (int i = 0; i < series; i++) {
      encoder.beginSeries().label("__name__", name).label("i", "v" + i).sample(i, 1).endSeries();
    }
    return encoder.toByteArray();
  }

  private HttpResponse<String> post(
      ScriptedDownstream downstream, String tenant, byte[] body, String... headers)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(downstream.url()))
            .header("Content-Type", "application/x-protobuf")
            .header("Content-Encoding", "snappy")
            .header("X-Scope-OrgID", tenant)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    for (int i = 0; i < headers.length; i += 2) {
      b.setHeader(headers[i], headers[i + 1]);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void recordsEveryRequestAndCountsEachTenantsSeries() throws Exception {
    try (ScriptedDownstream downstream = new ScriptedDownstream()) {
      byte[] a = request(3, "m");
      byte[] b = request(5, "n");
      assertEquals(200, post(downstream, "a", Snappy.compress(a)).statusCode());
      assertEquals(200, post(downstream, "b", Snappy.compress(b)).statusCode());
      assertEquals(200, post(downstream, "a", Snappy.compress(a)).statusCode());

      assertEquals(List.of("a", "b"), List.copyOf(downstream.byTenant().keySet()));
      assertArrayEquals(b, downstream.byTenant().get("b").get(0).body());
      assertEquals("a", downstream.received().get(2).tenant());
      assertEquals(
          new TenantCount(2, 6, 2L * Snappy.compress(a).length, 2L * a.length, Map.of(200, 2L)),
          downstream.counts().get("a"));
      assertEquals(11, downstream.totalSeries());
      assertEquals(0, downstream.errors());
    }
  }

  @Test
  void answersFromTheTenantsScriptThenTheWildcardsThen200() throws Exception {
    try (ScriptedDownstream downstream = new ScriptedDownstream()) {
      downstream.script("a", Reply.status(400, "err: sample too old"), Reply.retryAfter(429, "7"));
      downstream.script("*", Reply.status(503));
      byte[] body = Snappy.compress(request(2, "m"));

      HttpResponse<String> first = post(downstream, "a", body);
      assertEquals(400, first.statusCode());
      assertEquals("err: sample too old", first.body());
      HttpResponse<String> second = post(downstream, "a", body);
      assertEquals(429, second.statusCode());
      assertEquals("7", second.headers().firstValue("Retry-After").orElseThrow());
      assertEquals(503, post(downstream, "b", body).statusCode());
      assertEquals(200, post(downstream, "a", body).statusCode());

      TenantCount a = downstream.counts().get("a");
      assertEquals(Map.of(200, 1L, 400, 1L, 429, 1L), a.answers());
      assertEquals(1, a.requests(), "only the request answered 2xx counts as received");
      assertEquals(2, a.series());
      assertEquals(4, downstream.received().size(), "refused requests are recorded too");
    }
  }

  @Test
  void aTenantsRuleAnswersOnceItsScriptIsEmptyAndNullFallsThrough() throws Exception {
    try (ScriptedDownstream downstream = new ScriptedDownstream()) {
      AtomicBoolean throttled = new AtomicBoolean(true);
      downstream.script("a", Reply.status(503));
      downstream.rule("a", () -> throttled.get() ? Reply.status(429) : null);
      downstream.script("*", Reply.status(500));
      byte[] body = Snappy.compress(request(1, "m"));

      assertEquals(503, post(downstream, "a", body).statusCode());
      assertEquals(429, post(downstream, "a", body).statusCode());
      assertEquals(429, post(downstream, "a", body).statusCode());
      throttled.set(false);
      assertEquals(500, post(downstream, "a", body).statusCode());
      assertEquals(200, post(downstream, "a", body).statusCode());
    }
  }

  @Test
  void aBodyRuleAnswersFromTheDecompressedBody() throws Exception {
    try (ScriptedDownstream downstream = new ScriptedDownstream()) {
      byte[] good = request(1, "good");
      byte[] bad = request(1, "bad");
      downstream.bodyRule(
          "a", body -> Arrays.equals(body, bad) ? Reply.status(400, "cannot parse") : null);
      assertEquals(200, post(downstream, "a", Snappy.compress(good)).statusCode());
      HttpResponse<String> refused = post(downstream, "a", Snappy.compress(bad));
      assertEquals(400, refused.statusCode());
      assertEquals("cannot parse", refused.body());
      assertEquals(Map.of(200, 1L, 400, 1L), downstream.counts().get("a").answers());
    }
  }

  @Test
  void aResetClosesTheConnectionWithoutAnswer() throws Exception {
    try (ScriptedDownstream downstream = new ScriptedDownstream()) {
      downstream.script("a", Reply.reset());
      byte[] body = Snappy.compress(request(1, "m"));
      assertThrows(IOException.class, () -> post(downstream, "a", body));
      assertEquals(Map.of(0, 1L), downstream.counts().get("a").answers());
      assertEquals(200, post(downstream, "a", body).statusCode());
    }
  }

  @Test
  void bodiesItCannotReadAreRefusedAndCountedAsErrors() throws Exception {
    try (ScriptedDownstream downstream = new ScriptedDownstream()) {
      byte[] good = request(2, "m");
      HttpResponse<String> zstd =
          post(downstream, "a", good, "Content-Encoding", "zstd", "X-Extra", "1");
      assertEquals(415, zstd.statusCode());
      assertEquals(400, post(downstream, "a", new byte[] {(byte) 0xFF, 1, 2}).statusCode());
      byte[] truncated = Snappy.compress(Arrays.copyOf(good, good.length - 1));
      HttpResponse<String> broken = post(downstream, "a", truncated);
      assertEquals(400, broken.statusCode());
      assertTrue(broken.body().contains("not a well-formed remote-write request"), broken.body());

      assertEquals(3, downstream.errors());
      assertTrue(downstream.firstError().startsWith("415 Content-Encoding zstd"));
      TenantCount a = downstream.counts().get("a");
      assertEquals(0, a.series());
      assertEquals(Map.of(400, 2L, 415, 1L), a.answers());
    }
  }

  @Test
  void countsPrw2SeriesByTheContentType() throws Exception {
    byte[] series = RawProto.len(5, RawProto.len(1, RawProto.varint(1), RawProto.varint(2)));
    byte[] request = RawProto.cat(RawProto.str(4, ""), RawProto.str(4, "a"), series, series);
    try (ScriptedDownstream downstream = new ScriptedDownstream()) {
      String v2 = "application/x-protobuf;proto=io.prometheus.write.v2.Request";
      assertEquals(
          200, post(downstream, "a", Snappy.compress(request), "Content-Type", v2).statusCode());
      assertEquals(2, downstream.counts().get("a").series());
    }
  }

  @Test
  void withoutRecordingOnlyCountsAreKept() throws Exception {
    try (ScriptedDownstream downstream =
        ScriptedDownstream.counting(0, 1).tenantHeader("X-Tenant")) {
      byte[] body = Snappy.compress(request(4, "m"));
      assertEquals(200, post(downstream, "ignored", body, "X-Tenant", "t").statusCode());
      assertEquals(List.of(), downstream.received());
      assertEquals(4, downstream.counts().get("t").series());
    }
  }
}
