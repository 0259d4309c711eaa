package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A real Prometheus 2.x sends its metric metadata apart from the series, in requests of their own;
 * through the relay each family's metadata reaches the tenants its series went to. Prometheus
 * scrapes two static expositions served by this test, one in the text format and one in
 * OpenMetrics, whose series carry a {@code team} label that {@code write_relabel_configs} turns
 * into the tenant label {@code service_id}; it sends metadata every second ({@code
 * metadata_config.send_interval}).
 */
@ExtendWith(PrometheusProcess.Required.class)
class PrometheusMetadataTest {
  private static final Duration DEADLINE = Duration.ofSeconds(60);

  /** Text format: a counter, a histogram shared by two teams, a gauge, one declared only. */
  private static final String TEXT =
      """
      # HELP shop_orders_total Orders placed.
      # TYPE shop_orders_total counter
      shop_orders_total{team="a"} 12
      # HELP shop_latency_seconds Checkout latency.
      # TYPE shop_latency_seconds histogram
      shop_latency_seconds_bucket{team="a",le="0.5"} 3
      shop_latency_seconds_bucket{team="a",le="+Inf"} 4
      shop_latency_seconds_sum{team="a"} 1.5
      shop_latency_seconds_count{team="a"} 4
      shop_latency_seconds_bucket{team="b",le="0.5"} 1
      shop_latency_seconds_bucket{team="b",le="+Inf"} 1
      shop_latency_seconds_sum{team="b"} 0.2
      shop_latency_seconds_count{team="b"} 1
      # HELP shop_queue_depth Items waiting.
      # TYPE shop_queue_depth gauge
      shop_queue_depth{team="b"} 7
      # HELP shop_declared_only Declared, never sampled.
      # TYPE shop_declared_only gauge
      """;

  /** OpenMetrics: the counter's family is named without {@code _total}, its series with it. */
  private static final String OPEN_METRICS =
      """
      # TYPE shop_jobs counter
      # HELP shop_jobs Jobs run.
      shop_jobs_total{team="c"} 3
      # EOF
      """;

  private static final Map<String, Set<String>> EXPECTED =
      Map.of(
          "team-a", Set.of("shop_orders_total", "shop_latency_seconds"),
          "team-b", Set.of("shop_latency_seconds", "shop_queue_depth"),
          "team-c", Set.of("shop_jobs"));

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void eachFamilysMetadataReachesTheTenantsOfItsSeries() throws Exception {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    HttpServer exposition = HttpServer.create(new InetSocketAddress(loopback(), 0), 0);
    exposition.createContext("/metrics", e -> serve(e, "text/plain; version=0.0.4", TEXT));
    exposition.createContext(
        "/om",
        e -> serve(e, "application/openmetrics-text; version=1.0.0; charset=utf-8", OPEN_METRICS));
    exposition.start();
    try (RelayFixture relay = new RelayFixture();
        PrometheusProcess sender =
            PrometheusProcess.start(
                config(relay.uri("/api/v1/write").toString(), exposition.getAddress().getPort()))) {
      Map<String, Map<String, MetricMetadata>> got = new TreeMap<>();
      boolean arrived =
          Await.within(
              remaining(deadline),
              () -> {
                got.clear();
                got.putAll(metadataByTenant(relay.downstream.received()));
                for (Map.Entry<String, Set<String>> e : EXPECTED.entrySet()) {
                  if (!got.getOrDefault(e.getKey(), Map.of()).keySet().containsAll(e.getValue())) {
                    return false;
                  }
                }
                return got.getOrDefault("anonymous", Map.of()).containsKey("shop_declared_only");
              });
      assertTrue(
          arrived,
          () -> "metadata by tenant: " + summary(got) + " within " + DEADLINE + sender.logTail());

      for (Map.Entry<String, Set<String>> e : EXPECTED.entrySet()) {
        assertEquals(
            e.getValue(),
            got.get(e.getKey()).keySet(),
            "families whose metadata " + e.getKey() + " received: only its own");
      }
      MetricMetadata latency = got.get("team-b").get("shop_latency_seconds");
      assertEquals(MetricMetadata.MetricType.HISTOGRAM, latency.getType());
      assertEquals("Checkout latency.", latency.getHelp());
      MetricMetadata jobs = got.get("team-c").get("shop_jobs");
      assertEquals(MetricMetadata.MetricType.COUNTER, jobs.getType());
      assertEquals("Jobs run.", jobs.getHelp());

      Map<String, Double> own = senderMetrics(sender);
      assertTrue(
          own.getOrDefault("prometheus_remote_storage_metadata_total", 0.0) > 0,
          () -> "the sender counted metadata sent: " + own);
      assertEquals(
          0.0,
          own.getOrDefault("prometheus_remote_storage_metadata_failed_total", 0.0),
          "metadata the sender gave up on");
      assertEquals(
          0.0,
          own.getOrDefault("prometheus_remote_storage_metadata_retried_total", 0.0),
          "metadata the sender had to retry");
    } finally {
      exposition.stop(0);
    }
  }

  private static String config(String remoteWriteUrl, int expositionPort) {
    return """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        scrape_configs:
          - job_name: shop
            static_configs:
              - targets: ['127.0.0.1:%d']
          - job_name: shop-openmetrics
            metrics_path: /om
            static_configs:
              - targets: ['127.0.0.1:%d']
        remote_write:
          - url: '%s'
            queue_config:
              batch_send_deadline: 1s
              min_backoff: 100ms
              max_backoff: 1s
            metadata_config:
              send: true
              send_interval: 1s
            write_relabel_configs:
              - source_labels: [team]
                regex: '(.+)'
                target_label: service_id
                replacement: 'team-$1'
        """
        .formatted(expositionPort, expositionPort, remoteWriteUrl);
  }

  private static InetAddress loopback() throws IOException {
    return InetAddress.getByName("127.0.0.1");
  }

  private static void serve(com.sun.net.httpserver.HttpExchange e, String type, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    e.getResponseHeaders().set("Content-Type", type);
    e.sendResponseHeaders(200, bytes.length);
    try (OutputStream out = e.getResponseBody()) {
      out.write(bytes);
    }
  }

  /**
   * The metadata each tenant received, by family name. Prometheus 2.x sends metadata apart from
   * series, but a tenant's lane may merge a metadata batch with a series batch into one downstream
   * request.
   */
  private static Map<String, Map<String, MetricMetadata>> metadataByTenant(
      List<Received> received) {
    Map<String, Map<String, MetricMetadata>> out = new TreeMap<>();
    for (Received r : received) {
      WriteRequest w;
      try {
        w = WriteRequest.parseFrom(r.body());
      } catch (IOException e) {
        throw new AssertionError("not a WriteRequest for " + r.tenant(), e);
      }
      for (MetricMetadata m : w.getMetadataList()) {
        out.computeIfAbsent(r.tenant(), t -> new TreeMap<>()).put(m.getMetricFamilyName(), m);
      }
    }
    return out;
  }

  private static Map<String, Set<String>> summary(Map<String, Map<String, MetricMetadata>> got) {
    Map<String, Set<String>> out = new TreeMap<>();
    got.forEach((tenant, families) -> out.put(tenant, new TreeSet<>(families.keySet())));
    return out;
  }

  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})?\\s+(\\S+)", Pattern.MULTILINE);

  /** The sender's own metrics, summed over their labels. */
  private static Map<String, Double> senderMetrics(PrometheusProcess sender) throws Exception {
    HttpResponse<String> page =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(sender.baseUrl() + "/metrics"))
                    .timeout(Duration.ofSeconds(5))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    Map<String, Double> out = new HashMap<>();
    Matcher m = SAMPLE.matcher(page.body());
    while (m.find()) {
      out.merge(m.group(1), Double.parseDouble(m.group(3)), Double::sum);
    }
    return out;
  }

  private static Duration remaining(long deadline) {
    return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
  }
}
