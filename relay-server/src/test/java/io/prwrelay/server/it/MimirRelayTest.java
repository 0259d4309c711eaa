package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.Sample;
import io.prwrelay.oracle.v2.TimeSeries;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The relay in front of a real Grafana Mimir ({@link MimirProcess}): what senders write arrives in
 * each tenant of Mimir, exactly, over PRW 1.0 and 2.0; a tenant over its series limit is answered
 * once; a Mimir restart loses nothing the relay acknowledged.
 */
@ExtendWith(MimirProcess.Required.class)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class MimirRelayTest {
  private static final String FROM_PROMETHEUS = "{job=\"" + PrometheusProcess.SENDER_JOB + "\"}";

  private static Map<String, String> toMimir(MimirProcess mimir, String... more) {
    Map<String, String> m = new TreeMap<>();
    m.put("relay.downstream.url", mimir.pushUrl().toString());
    for (int i = 0; i < more.length; i += 2) {
      m.put(more[i], more[i + 1]);
    }
    return m;
  }

  /** Every metric name of the sender lands in the one Mimir tenant its service_id names. */
  @Test
  @ExtendWith(PrometheusProcess.Required.class)
  void prometheusThroughTheRelayFillsEachTenantWithItsOwnSeriesOnly() throws Exception {
    try (MimirProcess mimir = MimirProcess.start();
        RelayFixture relay = new RelayFixture(toMimir(mimir));
        PrometheusProcess sender = PrometheusProcess.startSender(relay.uri("/api/v1/write"))) {
      List<String> tenants = List.of("tenant-0", "tenant-1", "tenant-2");
      Map<String, TreeSet<String>> names = new TreeMap<>();
      boolean arrived =
          Await.within(
              Duration.ofSeconds(40),
              () -> {
                for (String t : tenants) {
                  TreeSet<String> n = new TreeSet<>();
                  for (var s :
                      mimir.query(t, "group by (__name__, service_id) (" + FROM_PROMETHEUS + ")")) {
                    n.add(s.label("__name__") + "/" + s.label("service_id"));
                  }
                  names.put(t, n);
                }
                return names.values().stream().allMatch(n -> n.size() > 3);
              });
      assertTrue(arrived, () -> "too few names per tenant: " + names + "\n" + mimir.logTail());
      for (String t : tenants) {
        for (String nameAndTenant : names.get(t)) {
          String name = nameAndTenant.substring(0, nameAndTenant.indexOf('/'));
          assertEquals(t + "/" + t, PrometheusProcess.expectedServiceId(name) + "/" + t, name);
          assertEquals(name + "/" + t, nameAndTenant, "stored under its own tenant");
        }
      }
      double failed =
          sender.query(PrometheusRelayTest.SAMPLES_FAILED + FROM_PROMETHEUS).stream()
              .mapToDouble(PrometheusProcess.Series::asDouble)
              .sum();
      System.out.printf(
          "Prometheus -> relay -> Mimir: metric names per tenant %s; Prometheus failed %.0f%n",
          names.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue().size()).toList(),
          failed);
      assertEquals(0, failed, "samples Prometheus failed");
    }
  }

  /**
   * A PRW 2.0 sender through {@code relay.downstream.protocol=v2}: Mimir takes each tenant's PRW
   * 2.0 request and answers its {@code *-Written} counts, which reach the sender summed, equal to
   * what it sent; each tenant's series are stored with their values.
   */
  @Test
  void remoteWrite2InAndOutIsStoredPerTenantAndTheSenderSeesEverySampleWritten() throws Exception {
    try (MimirProcess mimir = MimirProcess.start();
        RelayFixture relay = new RelayFixture(toMimir(mimir, "relay.downstream.protocol", "v2"))) {
      long now = System.currentTimeMillis();
      List<String> symbols =
          List.of("", "__name__", "requests", "service_id", "a", "b", "c", "path", "/x", "/y");
      Request.Builder request = Request.newBuilder().addAllSymbols(symbols);
      int samples = 0;
      for (int tenant = 4; tenant <= 6; tenant++) {
        for (int path = 8; path <= 9; path++) {
          TimeSeries.Builder s =
              TimeSeries.newBuilder().addAllLabelsRefs(List.of(1, 2, 7, path, 3, tenant));
          for (int i = 0; i < 3; i++) {
            s.addSamples(
                Sample.newBuilder()
                    .setValue(tenant * 100 + path * 10 + i)
                    .setTimestamp(now - 2000 + i * 1000));
            samples++;
          }
          request.addTimeseries(s);
        }
      }

      HttpResponse<String> r = relay.writeV2(request.build().toByteArray());

      assertEquals(204, r.statusCode(), r.body());
      assertEquals(
          String.valueOf(samples),
          r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written").orElse(null));
      assertEquals(
          "0", r.headers().firstValue("X-Prometheus-Remote-Write-Histograms-Written").orElse(null));
      assertEquals(
          "0", r.headers().firstValue("X-Prometheus-Remote-Write-Exemplars-Written").orElse(null));
      for (String tenant : List.of("a", "b", "c")) {
        List<MimirProcess.StoredSeries> stored =
            mimir.samples(tenant, "requests", Duration.ofMinutes(1));
        assertEquals(2, stored.size(), tenant + ": " + stored);
        int t = symbols.indexOf(tenant);
        for (MimirProcess.StoredSeries s : stored) {
          assertEquals(tenant, s.label("service_id"));
          int path = symbols.indexOf(s.label("path"));
          assertEquals(
              List.of(
                  t * 100 + path * 10 + 0.0, t * 100 + path * 10 + 1.0, t * 100 + path * 10 + 2.0),
              java.util.Arrays.stream(s.values()).boxed().toList(),
              tenant + s.labels());
        }
      }
      assertEquals(
          3.0 * 2 * 3,
          mimir.metric("cortex_distributor_received_samples_total"),
          "Mimir received each sample once");
    }
  }

  /**
   * Eight senders at once write new series of a tenant limited to five: Mimir answers 400 for the
   * series beyond the limit and stores the rest; the relay answers those senders 400 naming the
   * limit, sends no request again in halves, and the other tenant of the same requests is stored
   * whole.
   */
  @Test
  void aTenantOverItsSeriesLimitIsAnsweredOnceAndTheRestIsStored() throws Exception {
    Map<String, String> five = Map.of("max_global_series_per_user", "5");
    try (MimirProcess mimir = MimirProcess.start(Map.of("limited", five));
        RelayFixture relay =
            new RelayFixture(toMimir(mimir, "relay.lanes.max-concurrent-sends", "1"))) {
      long now = System.currentTimeMillis();
      List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        WriteRequestEncoder e = new WriteRequestEncoder();
        for (int j = 0; j < 2; j++) {
          e.beginSeries()
              .label("__name__", "m" + i + "_" + j)
              .label("service_id", "limited")
              .sample(i, now)
              .endSeries();
        }
        e.beginSeries()
            .label("__name__", "n" + i)
            .label("service_id", "ok")
            .sample(i, now)
            .endSeries();
        answers.add(relay.writeAsync(e.toByteArray()));
      }
      int rejected = 0;
      for (CompletableFuture<HttpResponse<String>> f : answers) {
        HttpResponse<String> r = f.get();
        assertTrue(List.of(204, 400).contains(r.statusCode()), r.statusCode() + " " + r.body());
        if (r.statusCode() == 400) {
          rejected++;
          assertTrue(r.body().contains("per-user series limit of 5 exceeded"), r.body());
          assertTrue(r.body().contains("tenant limited"), r.body());
        }
      }
      String metrics = relay.get("/metrics").body();
      double sends =
          Scrape.sum(
              metrics, "relay_tenant_downstream_requests_total", Map.of("tenant", "limited"));
      double halves = Scrape.sumOr(metrics, "relay_tenant_split_sends_total", Map.of(), 0);
      double received = mimir.metric("cortex_distributor_requests_in_total", "user=\"limited\"");
      String stored = mimir.query("limited", "count({service_id=\"limited\"})").get(0).value();
      System.out.printf(
          "8 requests of 2 new series of tenant limited (max_global_series_per_user 5) and 1 of"
              + " tenant ok: %d answered 400; relay sent %.0f requests for limited (%.0f halves),"
              + " Mimir received %.0f and stores %s series of limited, %s of ok%n",
          rejected,
          sends,
          halves,
          received,
          stored,
          mimir.query("ok", "count({service_id=\"ok\"})").get(0).value());
      assertTrue(rejected > 0, "some senders' series were beyond the limit");
      assertEquals(0, halves, "no request sent again in halves");
      assertEquals(sends, received, "Mimir received what the relay sent, once");
      assertEquals("5", stored, "the series within the limit are stored");
      assertEquals("8", mimir.query("ok", "count({service_id=\"ok\"})").get(0).value());
    }
  }

  /**
   * A sender writes two tenants every 100 ms through the relay while Mimir is stopped and started
   * again: every sample the relay answered 2xx is in Mimir afterwards (the ingester's WAL), and the
   * requests during the outage were answered 5xx, for the sender to retry.
   */
  @Test
  void aMimirRestartDuringTrafficLosesNothingTheRelayAcknowledged() throws Exception {
    try (MimirProcess mimir = MimirProcess.start();
        RelayFixture relay = new RelayFixture(toMimir(mimir))) {
      Map<Long, Integer> answers = new java.util.concurrent.ConcurrentHashMap<>();
      java.util.concurrent.atomic.AtomicBoolean stop =
          new java.util.concurrent.atomic.AtomicBoolean();
      Thread writer =
          new Thread(
              () -> {
                long ts = System.currentTimeMillis();
                while (!stop.get()) {
                  ts = Math.max(ts + 1, System.currentTimeMillis());
                  WriteRequestEncoder e = new WriteRequestEncoder();
                  for (String t : List.of("x", "y")) {
                    e.beginSeries()
                        .label("__name__", "seq")
                        .label("service_id", t)
                        .sample(ts % 100_000, ts)
                        .endSeries();
                  }
                  try {
                    answers.put(ts, relay.write(e.toByteArray()).statusCode());
                    Thread.sleep(100);
                  } catch (Exception ex) {
                    answers.put(ts, -1);
                  }
                }
              },
              "restart-writer");
      writer.start();
      Thread.sleep(3000);
      mimir.restart();
      Thread.sleep(3000);
      stop.set(true);
      writer.join(10_000);

      TreeSet<Long> acknowledged = new TreeSet<>();
      answers.forEach(
          (ts, status) -> {
            if (status == 204) acknowledged.add(ts);
          });
      long failed = answers.values().stream().filter(s -> s != 204).count();
      for (String t : List.of("x", "y")) {
        TreeSet<Long> stored = new TreeSet<>();
        for (MimirProcess.StoredSeries s : mimir.samples(t, "seq", Duration.ofMinutes(2))) {
          for (long ts : s.timestampsMillis()) {
            stored.add(ts);
          }
        }
        TreeSet<Long> lost = new TreeSet<>(acknowledged);
        lost.removeAll(stored);
        System.out.printf(
            "Mimir restart under traffic, tenant %s: %d requests, %d answered 204, %d not"
                + " (retriable), %d samples stored, %d acknowledged and lost%n",
            t, answers.size(), acknowledged.size(), failed, stored.size(), lost.size());
        assertEquals(new TreeSet<Long>(), lost, "acknowledged samples missing in tenant " + t);
      }
      assertTrue(failed > 0, "the outage was seen: " + answers.values());
      assertTrue(acknowledged.size() > 20, "traffic before and after: " + acknowledged.size());
      for (int status : answers.values()) {
        assertTrue(List.of(204, 503).contains(status), "answers: " + answers.values());
      }
    }
  }
}
