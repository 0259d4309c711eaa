package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.server.it.PrometheusProcess.Series;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A real Prometheus 2.42 writing through the relay (sync mode) to a downstream that throttles one
 * of its three tenants (429, as Cortex answers over the ingestion rate): the relay answers 429 to
 * every request carrying the throttled tenant, Prometheus drops those batches (its default for 429)
 * and goes on with new ones, and the relay has delivered the other tenants' part of each batch
 * anyway, so their series keep arriving, each sample once.
 */
@ExtendWith(PrometheusProcess.Required.class)
class PrometheusThrottledTenantTest {
  private static final String THROTTLED = "tenant-1";
  private static final Set<String> HEALTHY = Set.of("tenant-0", "tenant-2");
  private static final Duration WATCH = Duration.ofSeconds(12);

  /** Scrape interval and batch deadline of the sender are 1 s: a few of them. */
  private static final Duration MAX_GAP = Duration.ofSeconds(4);

  private static final String FROM_SENDER = "{job=\"" + PrometheusProcess.SENDER_JOB + "\"}";

  /** One forwarded request: when it arrived and its newest sample. */
  private record Arrival(long atNanos, long newestMillis) {}

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void healthyTenantsKeepArrivingWhileThePrometheusBatchesCarryingAThrottledTenantGet429()
      throws Exception {
    try (RelayFixture relay = new RelayFixture();
        PrometheusProcess sender = PrometheusProcess.startSender(relay.uri("/api/v1/write"))) {
      Reply throttled =
          Reply.status(429, "ingestion rate limit (10) exceeded while adding 100 samples");
      relay.downstream.rule(THROTTLED, () -> throttled);
      boolean started =
          Await.within(
              Duration.ofSeconds(60),
              () -> relay.downstream.byTenant().keySet().containsAll(HEALTHY));
      assertTrue(started, () -> "healthy tenants never arrived\n" + sender.logTail());
      long watchFrom = System.nanoTime();
      Thread.sleep(WATCH.toMillis());
      long watchTo = System.nanoTime();
      long nowMillis = System.currentTimeMillis();

      Map<String, List<Arrival>> arrivals = new TreeMap<>();
      Map<String, Integer> duplicates = new TreeMap<>();
      Set<String> samples = new HashSet<>();
      for (Received r : relay.downstream.received()) {
        String tenant = r.tenant();
        if (!HEALTHY.contains(tenant)) {
          continue;
        }
        long newest = Long.MIN_VALUE;
        for (TimeSeries s : PrometheusRelayTest.decode(r).getTimeseriesList()) {
          Map<String, String> labels = new TreeMap<>();
          for (Label l : s.getLabelsList()) {
            labels.put(l.getName(), l.getValue());
          }
          for (Sample sample : s.getSamplesList()) {
            newest = Math.max(newest, sample.getTimestamp());
            if (!samples.add(labels + "@" + sample.getTimestamp())) {
              duplicates.merge(tenant, 1, Integer::sum);
            }
          }
        }
        arrivals
            .computeIfAbsent(tenant, t -> new ArrayList<>())
            .add(new Arrival(r.atNanos(), newest));
      }

      Map<String, Long> gaps = new TreeMap<>();
      Map<String, Long> ages = new TreeMap<>();
      for (String tenant : HEALTHY) {
        long last = watchFrom;
        long newest = Long.MIN_VALUE;
        long gap = 0;
        for (Arrival a : arrivals.getOrDefault(tenant, List.of())) {
          if (a.atNanos() - watchFrom > 0 && a.atNanos() - watchTo <= 0) {
            gap = Math.max(gap, a.atNanos() - last);
            last = a.atNanos();
          }
          newest = Math.max(newest, a.newestMillis());
        }
        gaps.put(tenant, TimeUnit.NANOSECONDS.toMillis(Math.max(gap, watchTo - last)));
        ages.put(tenant, nowMillis - newest);
      }

      String metrics = relay.get("/metrics").body();
      Map<String, Double> answers = answersByStatus(metrics);
      double failed = senderValue(sender, PrometheusRelayTest.SAMPLES_FAILED + FROM_SENDER);
      double retried = senderValue(sender, PrometheusRelayTest.SAMPLES_RETRIED + FROM_SENDER);
      System.out.printf(
          "prometheus with %s throttled: relay answers %s; longest gap between arrivals of a"
              + " healthy tenant %s ms, newest sample age %s ms; Prometheus dropped %.0f samples,"
              + " retried %.0f; duplicate samples %s%n",
          THROTTLED, answers, gaps, ages, failed, retried, duplicates);

      for (String tenant : HEALTHY) {
        assertTrue(
            gaps.get(tenant) <= MAX_GAP.toMillis(),
            () ->
                tenant
                    + " went "
                    + gaps.get(tenant)
                    + " ms without a request\n"
                    + sender.logTail());
        assertTrue(
            ages.get(tenant) <= MAX_GAP.toMillis() + 1000,
            () -> tenant + "'s newest sample is " + ages.get(tenant) + " ms old");
      }
      assertEquals(Map.of(), duplicates, "every healthy sample arrived once");
      assertTrue(answers.getOrDefault("429", 0.0) >= 5, "requests answered 429: " + answers);
      for (String status : answers.keySet()) {
        assertTrue(status.equals("204") || status.equals("429"), "answers: " + answers);
      }
      assertEquals(0.0, retried, "Prometheus does not retry a 429 by default");
      assertTrue(
          Await.within(
              Duration.ofSeconds(15),
              () -> senderValue(sender, PrometheusRelayTest.SAMPLES_FAILED + FROM_SENDER) > 0),
          "Prometheus dropped the batches answered 429\n" + sender.logTail());
    }
  }

  /** {@code relay_requests_total} by its {@code status} label. */
  private static Map<String, Double> answersByStatus(String metrics) {
    Map<String, Double> m = new TreeMap<>();
    for (String line : metrics.split("\n")) {
      if (line.startsWith("relay_requests_total{")) {
        int at = line.indexOf("status=\"") + 8;
        String status = line.substring(at, line.indexOf('"', at));
        m.merge(status, Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)), Double::sum);
      }
    }
    return m;
  }

  /** The value of a query on the sender yielding one series (its own counters), or 0. */
  private static double senderValue(PrometheusProcess sender, String promql) {
    List<Series> result = sender.query(promql);
    return result.isEmpty() ? 0 : result.get(0).asDouble();
  }
}
