package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real Prometheus HA pair through the relay into a real Mimir with HA deduplication: two {@code
 * prometheus} processes with the same external {@code cluster} label and {@code __replica__} r1 and
 * r2 scrape the same target (which answers each replica with its own value, so a stored sample
 * tells which replica it came from, and holds the first scrape of a round until the other replica's
 * comes, so that both replicas' batches reach the relay together) and remote-write through the
 * relay, 16 shards and 100 samples per send each, into Mimir with its HA tracker on. The relay's
 * lane is forced to coalesce ({@code relay.lanes.max-concurrent-sends=1}), so fragments of both
 * replicas wait in it together; in queue mode every fragment goes through the tenant's queue
 * ({@code direct-timeout=0}), whose drain merges records. Mimir judges each push by its first
 * series; it keeps exactly one replica, with no gap and no extra sample in any series.
 */
@ExtendWith({PrometheusProcess.Required.class, MimirProcess.Required.class})
class PrometheusHaPairMimirTest {
  private static final String TENANT = "ha";
  private static final int SERIES = 2000;
  private static final Duration SCRAPE = Duration.ofSeconds(2);
  private static final Duration RUN = Duration.ofSeconds(50);

  /** Samples this young may still be on their way; older ones must all be stored. */
  private static final Duration IN_FLIGHT = Duration.ofSeconds(8);

  /** The HA tracker elects the first replica it hears; the analysis starts after that settles. */
  private static final Duration SETTLE = Duration.ofSeconds(15);

  private static String config(String relayUrl, int targetPort, String replica) {
    return """
        global:
          scrape_interval: %ds
          external_labels:
            cluster: prod
            __replica__: %s
        scrape_configs:
          - job_name: ha-target
            params:
              replica: ['%s']
            static_configs:
              - targets: ['127.0.0.1:%d']
                labels:
                  service_id: %s
        remote_write:
          - url: '%s'
            queue_config:
              min_shards: 16
              max_shards: 16
              max_samples_per_send: 100
              batch_send_deadline: 1s
              min_backoff: 100ms
              max_backoff: 1s
        """
        .formatted(SCRAPE.toSeconds(), replica, replica, targetPort, TENANT, relayUrl);
  }

  /**
   * Holds the first of two callers until the second comes, or for at most {@code maxWaitMillis}.
   * The replicas' scrape offsets differ by d in [0, interval): one of them comes at most half an
   * interval after the other, well within the wait and the scrape timeout (the interval).
   */
  private static final class Pairing {
    private long round;
    private boolean waiting;

    synchronized void await(long maxWaitMillis) throws InterruptedException {
      if (waiting) {
        waiting = false;
        round++;
        notifyAll();
        return;
      }
      waiting = true;
      long mine = round;
      long deadline = System.currentTimeMillis() + maxWaitMillis;
      for (long left = maxWaitMillis; round == mine && left > 0; ) {
        wait(left);
        left = deadline - System.currentTimeMillis();
      }
      if (round == mine) {
        waiting = false; // the other replica is late: this round goes alone
        round++;
      }
    }
  }

  /** The target both replicas scrape: {@value #SERIES} gauges, valued 1 for r1 and 2 for r2. */
  private static HttpServer target() throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(Executors.newCachedThreadPool());
    Pairing pairing = new Pairing();
    server.createContext(
        "/metrics",
        exchange -> {
          try {
            pairing.await(SCRAPE.toMillis() * 3 / 4);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          String query = exchange.getRequestURI().getQuery();
          String value = query != null && query.contains("replica=r2") ? "2" : "1";
          StringBuilder b = new StringBuilder("# TYPE ha_test_value gauge\n");
          for (int i = 0; i < SERIES; i++) {
            b.append("ha_test_value{i=\"").append(i).append("\"} ").append(value).append('\n');
          }
          byte[] body = b.toString().getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    server.start();
    return server;
  }

  @TempDir Path queueDir;

  @ParameterizedTest(name = "{0} mode")
  @ValueSource(strings = {"sync", "queue"})
  @Timeout(value = 300, unit = TimeUnit.SECONDS)
  void mimirKeepsExactlyOneReplicaWithNoGapWhileTheRelayCoalesces(String mode) throws Exception {
    HttpServer target = target();
    Map<String, String> relayConfig = new HashMap<>();
    relayConfig.put("relay.downstream.timeout", "20s");
    relayConfig.put("relay.downstream.attempt-timeout", "10s");
    relayConfig.put("relay.lanes.max-concurrent-sends", "1");
    if (mode.equals("queue")) {
      relayConfig.put("relay.delivery.mode", "queue");
      relayConfig.put("relay.delivery.queue.dir", queueDir.toString());
      relayConfig.put("relay.delivery.queue.direct-timeout", "0");
    }
    try (MimirProcess mimir =
            MimirProcess.start(
                "-distributor.ha-tracker.enable=true",
                "-distributor.ha-tracker.enable-for-all-users=true",
                "-distributor.ha-tracker.store=inmemory",
                "-distributor.ha-tracker.failover-timeout=120s");
        RelayFixture relay = new RelayFixture(withUrl(relayConfig, mimir))) {
      String relayUrl = relay.uri("/api/v1/write").toString();
      int port = target.getAddress().getPort();
      long startMillis = System.currentTimeMillis();
      try (PrometheusProcess r1 = PrometheusProcess.start(config(relayUrl, port, "r1"));
          PrometheusProcess r2 = PrometheusProcess.start(config(relayUrl, port, "r2"))) {
        Thread.sleep(RUN.toMillis());
        long endMillis = System.currentTimeMillis() - IN_FLIGHT.toMillis();
        long fromMillis = startMillis + SETTLE.toMillis();

        List<MimirProcess.StoredSeries> stored =
            mimir.samples(TENANT, "{__name__=\"ha_test_value\"}", RUN.plusSeconds(30));
        double deduped = mimir.metric("cortex_distributor_deduped_samples_total");
        String relayMetrics = relay.get("/metrics").body();
        double senderRequests = Scrape.sum(relayMetrics, "relay_requests_total", Map.of());
        double downstreamRequests =
            Scrape.sum(
                relayMetrics, "relay_tenant_downstream_requests_total", Map.of("tenant", TENANT));

        Map<String, Integer> values = new TreeMap<>();
        List<String> gaps = new ArrayList<>();
        List<String> extra = new ArrayList<>();
        int checked = 0;
        for (MimirProcess.StoredSeries s : stored) {
          assertNull(s.label("__replica__"), "Mimir removes the replica label: " + s.labels());
          assertEquals("prod", s.label("cluster"));
          long previous = Long.MIN_VALUE;
          for (int k = 0; k < s.timestampsMillis().length; k++) {
            long t = s.timestampsMillis()[k];
            if (t < fromMillis || t > endMillis) {
              continue;
            }
            checked++;
            values.merge(String.valueOf((int) s.values()[k]), 1, Integer::sum);
            if (previous != Long.MIN_VALUE) {
              long step = t - previous;
              if (step > SCRAPE.toMillis() * 3 / 2) {
                gaps.add(s.label("i") + "@" + previous + "+" + step);
              } else if (step < SCRAPE.toMillis() / 2) {
                extra.add(s.label("i") + "@" + t + "-" + step);
              }
            }
            previous = t;
          }
        }
        System.out.printf(
            "HA pair through the relay (%s mode) into Mimir: %d series, %d samples checked, by replica value"
                + " %s; gaps %d, extra samples %d; Mimir deduplicated %.0f samples; relay: %.0f"
                + " sender requests, %.0f downstream requests%n",
            mode,
            stored.size(),
            checked,
            values,
            gaps.size(),
            extra.size(),
            deduped,
            senderRequests,
            downstreamRequests);

        assertEquals(SERIES, stored.size(), "every series, once (the replica label removed)");
        assertEquals(1, values.size(), "samples of one replica only: " + values);
        assertTrue(checked >= SERIES * 10, "samples checked: " + checked);
        assertEquals(List.of(), gaps.subList(0, Math.min(5, gaps.size())), "no gap");
        assertEquals(List.of(), extra.subList(0, Math.min(5, extra.size())), "no extra sample");
        assertTrue(deduped > 0, "Mimir dropped the standby's pushes: " + deduped);
        assertTrue(
            downstreamRequests < senderRequests,
            "the relay merged requests: " + downstreamRequests + " of " + senderRequests);
      }
    } finally {
      target.stop(0);
    }
  }

  private static Map<String, String> withUrl(Map<String, String> config, MimirProcess mimir) {
    Map<String, String> c = new HashMap<>(config);
    c.put("relay.downstream.url", mimir.pushUrl().toString());
    return c;
  }
}
