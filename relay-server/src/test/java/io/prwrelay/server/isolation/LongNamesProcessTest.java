package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.TimeSeries;
import io.prwrelay.server.it.MiniJson;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * Metric names chosen to make the relay keep or copy what they weigh, sent to the relay as a small
 * container runs it ({@link RelayProcess#SMALL_CONTAINER}: 256 MiB of heap and of direct memory, an
 * {@code OutOfMemoryError} ends the process; two event loops, the tenant insight on): PRW 2.0
 * requests whose series cycle between two symbols of a megabyte, requests of twenty new names of a
 * megabyte each, and a thousand tenants whose top metrics are long names, then the tenants page and
 * its JSON. Each was enough to end such a process before the names were bounded. After each, the
 * relay is alive, another sender's PRW 1.0 and PRW 2.0 writes are answered 204 and reach the
 * downstream exactly as sent, and {@code /api/v1/tenants} and {@code /tenants} answer within their
 * 2 MiB.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LongNamesProcessTest {
  private static final Duration START = Duration.ofSeconds(60);
  private static final int MIB = 1 << 20;
  private static final int PAGE_BOUND = 2 * MIB;
  private static final String V2_TYPE =
      "application/x-protobuf;proto=io.prometheus.write.v2.Request";
  private static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @TempDir Path dir;

  private ScriptedDownstream downstream;
  private RelayProcess relay;
  private int innocentWrites;

  @BeforeEach
  void start() throws Exception {
    downstream = new ScriptedDownstream();
    relay =
        RelayProcess.start(
            dir,
            Map.of(
                "relay.downstream.url", downstream.url(),
                "relay.downstream.protocol", "v2",
                "relay.server.io-threads", "2",
                // Set, not left to its default, which this heap scales down to about a hundred
                // tenants: the page's own byte bound must hold with a thousand long tenant rows.
                "relay.insight.max-tenants", "1000"),
            RelayProcess.SMALL_CONTAINER);
    relay.awaitListening(START);
  }

  @AfterEach
  void stop() throws Exception {
    try {
      relay.close();
    } finally {
      downstream.close();
    }
  }

  private URI uri(String path) {
    InetSocketAddress a = relay.address();
    return URI.create("http://127.0.0.1:" + a.getPort() + path);
  }

  private HttpResponse<String> post(byte[] request, boolean v2) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(uri("/api/v1/write"))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Encoding", "snappy")
            .header("Content-Type", v2 ? V2_TYPE : "application/x-protobuf")
            .header("X-Prometheus-Remote-Write-Version", v2 ? "2.0.0" : "0.1.0")
            .POST(HttpRequest.BodyPublishers.ofByteArray(Snappy.compress(request)))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<byte[]> get(String path) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  /** {@code n} series of the PRW 2.0 {@code tenant}, series i named {@code names[i % length]}. */
  private static Request v2(String tenant, int n, String... names) {
    Request.Builder r = Request.newBuilder().addSymbols("").addSymbols("__name__");
    for (String name : names) {
      r.addSymbols(name);
    }
    int base = r.getSymbolsCount();
    r.addSymbols("i").addSymbols("service_id").addSymbols(tenant);
    for (int i = 0; i < n; i++) {
      r.addSymbols(Integer.toString(i));
      r.addTimeseries(
          TimeSeries.newBuilder()
              .addLabelsRefs(1)
              .addLabelsRefs(2 + i % names.length)
              .addLabelsRefs(base)
              .addLabelsRefs(base + 3 + i)
              .addLabelsRefs(base + 1)
              .addLabelsRefs(base + 2)
              .addSamples(io.prwrelay.oracle.v2.Sample.newBuilder().setValue(i).setTimestamp(i)));
    }
    return r.build();
  }

  private static io.prwrelay.oracle.v1.TimeSeries v1Series(String tenant, String name, int i) {
    return io.prwrelay.oracle.v1.TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addLabels(Label.newBuilder().setName("i").setValue(Integer.toString(i)))
        .addLabels(Label.newBuilder().setName("service_id").setValue(tenant))
        .addSamples(Sample.newBuilder().setValue(i).setTimestamp(1_700_000_000_000L + i))
        .build();
  }

  /** A name of {@code length} bytes whose first bytes say {@code id}. */
  private static String name(String id, char fill, int length) {
    return id + String.valueOf(fill).repeat(length - id.length());
  }

  /**
   * The relay lives, answers another sender's PRW 1.0 and PRW 2.0 writes 204, and the downstream
   * receives each exactly as sent.
   */
  private void assertInnocentSenderIsServed() throws Exception {
    assertTrue(relay.isAlive(), relay.log());
    int k = innocentWrites++;
    WriteRequest v1 =
        WriteRequest.newBuilder()
            .addTimeseries(v1Series("innocent", "up", k))
            .addTimeseries(v1Series("innocent", "http_requests_total", k))
            .build();
    HttpResponse<String> a = post(v1.toByteArray(), false);
    assertEquals(204, a.statusCode(), a.body());
    Request v2 = v2("innocent", 3, "node_cpu_seconds_total", "up");
    HttpResponse<String> b = post(v2.toByteArray(), true);
    assertEquals(204, b.statusCode(), b.body());
    List<Received> got = downstream.byTenant().get("innocent");
    assertEquals(2 * innocentWrites, got.size());
    assertEquals(v1, WriteRequest.parseFrom(got.get(got.size() - 2).body()));
    assertEquals(v2, Request.parseFrom(got.get(got.size() - 1).body()));
    assertEquals(200, get("/-/healthy").statusCode());
  }

  /**
   * {@code /api/v1/tenants} and {@code /tenants} answer 200 within their bound, every shown metric
   * name at most 256 bytes; returns the JSON document.
   */
  private Map<String, Object> assertTenantsPagesAreBounded() throws Exception {
    HttpResponse<byte[]> json = get("/api/v1/tenants");
    assertEquals(200, json.statusCode());
    assertTrue(json.body().length <= PAGE_BOUND + 1, "JSON of " + json.body().length + " bytes");
    @SuppressWarnings("unchecked")
    Map<String, Object> doc =
        (Map<String, Object>) MiniJson.parse(new String(json.body(), StandardCharsets.UTF_8));
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> tenants = (List<Map<String, Object>>) doc.get("tenants");
    assertEquals(
        (Double) doc.get("tracked_tenants"), tenants.size() + (Double) doc.get("tenants_omitted"));
    for (Map<String, Object> t : tenants) {
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> top = (List<Map<String, Object>>) t.get("top_metrics");
      for (Map<String, Object> m : top) {
        String name = (String) m.get("name");
        assertTrue(name.getBytes(StandardCharsets.UTF_8).length <= 256, name);
      }
    }
    HttpResponse<byte[]> page = get("/tenants");
    assertEquals(200, page.statusCode());
    assertTrue(page.body().length <= PAGE_BOUND + 1, "page of " + page.body().length + " bytes");
    assertTrue(new String(page.body(), StandardCharsets.UTF_8).strip().endsWith("</html>"));
    return doc;
  }

  @Test
  void seriesCyclingBetweenTwoMegabyteSymbolsCostTheRelayNothingThatStays() throws Exception {
    // Equal length and equal first and last bytes: the two names share a slot of the name cache.
    String x = "x" + "a".repeat(MIB - 2) + "x";
    String y = "x" + "b".repeat(MIB - 2) + "x";
    Request attack = v2("attacker", 4000, x, y);
    byte[] body = attack.toByteArray();
    assertTrue(Snappy.compress(body).length < 200 << 10, "about 100 KB on the wire");
    for (int i = 0; i < 10; i++) {
      HttpResponse<String> r = post(body, true);
      assertEquals(204, r.statusCode(), r.body());
    }
    assertInnocentSenderIsServed();
    Map<String, Object> doc = assertTenantsPagesAreBounded();
    assertTrue(
        doc.toString().contains("x" + "a".repeat(252) + "\u2026"),
        "the attacker's names are shown cut");
    assertFalse(relay.log().contains("OutOfMemoryError"), relay.log());
  }

  @Test
  void requestsOfTwentyNewMegabyteNamesLeaveTheNameTableBounded() throws Exception {
    for (int request = 0; request < 5; request++) {
      String[] names = new String[20];
      for (int n = 0; n < names.length; n++) {
        names[n] = name("r" + request + "_n" + n + "_", 'a', MIB);
      }
      HttpResponse<String> r = post(v2("attacker", 320, names).toByteArray(), true);
      assertEquals(204, r.statusCode(), r.body());
    }
    assertInnocentSenderIsServed();
    assertTenantsPagesAreBounded();
    assertFalse(relay.log().contains("OutOfMemoryError"), relay.log());
  }

  @Test
  void aThousandTenantsWithLongTopMetricsGetABoundedPage() throws Exception {
    String[] names = new String[3];
    for (int n = 0; n < names.length; n++) {
      names[n] = name(n + "_", '<', 16 << 10);
    }
    for (int write = 0; write < 10; write++) {
      Request.Builder r = Request.newBuilder().addSymbols("").addSymbols("__name__");
      for (String name : names) {
        r.addSymbols(name);
      }
      int base = r.getSymbolsCount();
      r.addSymbols("i").addSymbols("service_id");
      for (int i = 0; i < 24; i++) {
        r.addSymbols(Integer.toString(i));
      }
      for (int t = write * 100; t < write * 100 + 100; t++) {
        // The longest valid tenant IDs; each ' takes six bytes in the JSON, five in the page.
        r.addSymbols(String.format("%03d", t) + "'".repeat(147));
        int tenant = r.getSymbolsCount() - 1;
        for (int i = 0; i < 24; i++) {
          r.addTimeseries(
              TimeSeries.newBuilder()
                  .addLabelsRefs(1)
                  .addLabelsRefs(2 + i % names.length)
                  .addLabelsRefs(base)
                  .addLabelsRefs(base + 2 + i)
                  .addLabelsRefs(base + 1)
                  .addLabelsRefs(tenant)
                  .addSamples(
                      io.prwrelay.oracle.v2.Sample.newBuilder().setValue(i).setTimestamp(i)));
        }
      }
      HttpResponse<String> answer = post(r.build().toByteArray(), true);
      assertEquals(204, answer.statusCode(), answer.body());
    }
    Map<String, Object> doc = assertTenantsPagesAreBounded();
    assertTrue((Double) doc.get("tenants_omitted") > 0, "the bound applies: " + doc.keySet());
    // The page refreshes itself every five seconds: asking again changes nothing.
    for (int i = 0; i < 3; i++) {
      assertTenantsPagesAreBounded();
    }
    assertInnocentSenderIsServed();
    assertFalse(relay.log().contains("OutOfMemoryError"), relay.log());
  }
}
