package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.server.config.ConfigKey;
import io.prwrelay.server.config.DownstreamConfig;
import io.prwrelay.server.config.ServerConfig;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Real senders that retry 429 without end, a Prometheus 2.42 with {@code retry_on_http_429: true}
 * and a vmagent (1.79, or 1.151 with {@code -remoteWrite.forcePromProto}: {@link VmagentProcess}),
 * each scraping itself every second and writing through a relay in its default configuration (sync
 * mode, {@code relay.delivery.throttled.policy=drop}) into a downstream that throttles one of the
 * three tenants as Cortex does (429 without {@code Retry-After}). The healthy tenants stay fresh at
 * the downstream (their newest sample never more than 5 s old), each sample delivered once, while
 * the throttled tenant's batches are answered 429 and then 400, dropped by the sender and counted
 * by the relay ({@code relay_tenant_series_dropped_total{reason="throttled"}}) and by the sender's
 * own failure counters.
 *
 * <p>Its freshness bound is absolute, so it runs in a test JVM of its own (tag {@code alone}).
 * Without a sender binary its test is skipped, except under {@code CI=true}, where it fails.
 */
@Tag("alone")
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class RetryingSendersThroughDefaultRelayTest {
  private static final String THROTTLED = "tenant-1";
  private static final Set<String> HEALTHY = Set.of("tenant-0", "tenant-2");
  private static final Duration WATCH = Duration.ofSeconds(20);
  private static final Duration FRESH = Duration.ofSeconds(5);
  private static final String FROM_PROMETHEUS = "{job=\"" + PrometheusProcess.SENDER_JOB + "\"}";

  /** The keys {@link RelayFixture} shortens for tests, back at their defaults. */
  private static final Map<String, String> DEFAULTS = defaults();

  private static Map<String, String> defaults() {
    Map<String, String> m = new HashMap<>();
    for (ConfigKey k :
        List.of(
            ServerConfig.IO_THREADS,
            DownstreamConfig.TIMEOUT,
            DownstreamConfig.ATTEMPT_TIMEOUT,
            DownstreamConfig.RETRY_INITIAL_BACKOFF,
            DownstreamConfig.RETRY_MAX_BACKOFF)) {
      m.put(k.name(), k.defaultValue());
    }
    return Map.copyOf(m);
  }

  @Test
  @ExtendWith(PrometheusProcess.Required.class)
  void prometheusRetrying429KeepsItsHealthyTenantsFreshAndTheThrottledTenantsLossIsCounted()
      throws Exception {
    try (RelayFixture relay = throttlingRelay();
        PrometheusProcess sender =
            PrometheusProcess.start(
                port ->
                    PrometheusProcess.senderConfig(
                        relay.uri("/api/v1/write").toString(), port, true))) {
      Freshness f = watch(relay, sender::logTail);
      double failed = query(sender, PrometheusRelayTest.SAMPLES_FAILED + FROM_PROMETHEUS);
      double retried = query(sender, PrometheusRelayTest.SAMPLES_RETRIED + FROM_PROMETHEUS);
      System.out.printf(
          "prometheus (retry_on_http_429) through the default relay, %s throttled: %s;"
              + " Prometheus dropped %.0f samples, retried %.0f%n",
          THROTTLED, f, failed, retried);
      f.assertFresh(sender::logTail);
      assertTrue(retried > 0, "Prometheus retried the 429s");
      assertTrue(failed > 0, "Prometheus dropped the batches answered 400");
    }
  }

  @Test
  @ExtendWith(VmagentProcess.Required.class)
  void vmagentKeepsItsHealthyTenantsFreshAndTheThrottledTenantsLossIsCounted() throws Exception {
    try (RelayFixture relay = throttlingRelay();
        VmagentProcess sender = VmagentProcess.start(relay.uri("/api/v1/write"))) {
      Freshness f = watch(relay, sender::logTail);
      double dropped = sender.metric("vmagent_remotewrite_packets_dropped_total");
      double retries = sender.metric("vmagent_remotewrite_retries_count_total");
      double ok = sender.metric("vmagent_remotewrite_requests_total", "status_code=\"2XX\"");
      List<String> repacked = sender.logLines(VmagentProcess.REPACKED);
      System.out.printf(
          "vmagent through the default relay, %s throttled: %s; vmagent requests 2xx %.0f,"
              + " retries %.0f, blocks dropped %.0f, blocks sent again in another encoding %d%n",
          THROTTLED, f, ok, retries, dropped, repacked.size());
      // The ledger skips delivered tenants when a sender retries the same bytes; a block sent again
      // in another encoding is a new body to the relay, and its healthy samples would arrive twice.
      assertEquals(List.of(), repacked, "vmagent retried every block with the same bytes");
      f.assertFresh(sender::logTail);
      assertTrue(retries > 0, "vmagent retried the 429s");
      assertTrue(dropped > 0, "vmagent dropped the blocks answered 400\n" + sender.logTail());
    }
  }

  /** A relay in its default configuration whose downstream throttles {@link #THROTTLED}. */
  private static RelayFixture throttlingRelay() throws Exception {
    RelayFixture relay = new RelayFixture(DEFAULTS);
    Reply cortex =
        Reply.status(
            429, "ingestion rate limit (10000) exceeded while adding 500 samples and 0 metadata");
    relay.downstream.rule(THROTTLED, () -> cortex);
    return relay;
  }

  /**
   * Waits until the healthy tenants arrive and the relay has dropped a throttled batch, then
   * watches for {@link #WATCH} and measures.
   */
  private static Freshness watch(RelayFixture relay, Supplier<String> senderLog) throws Exception {
    boolean started =
        Await.within(
            Duration.ofSeconds(60),
            () ->
                relay.downstream.byTenant().keySet().containsAll(HEALTHY)
                    && relayValue(relay, "relay_tenant_series_dropped_total", "throttled") > 0);
    assertTrue(
        started, () -> "no healthy tenant or no throttled drop within 60 s\n" + senderLog.get());
    long fromNanos = System.nanoTime();
    Thread.sleep(WATCH.toMillis());
    long toNanos = System.nanoTime();
    long wallOffsetMillis = System.currentTimeMillis() - TimeUnit.NANOSECONDS.toMillis(toNanos);
    return Freshness.of(relay, fromNanos, toNanos, wallOffsetMillis);
  }

  /**
   * What the watch showed.
   *
   * @param staleMillis per healthy tenant, the most its newest sample at the downstream was behind
   *     the clock at any moment of the watch
   * @param duplicates per healthy tenant, samples that arrived more than once
   * @param answers the relay's answers by status during the whole run
   * @param droppedSeries the throttled tenant's series the relay dropped (answered 400)
   * @param throttledSeries the throttled tenant's series answered 429 by the downstream
   * @param laneState the throttled tenant's lane state
   */
  record Freshness(
      Map<String, Long> staleMillis,
      Map<String, Integer> duplicates,
      Map<String, Double> answers,
      double droppedSeries,
      double throttledSeries,
      double laneState) {

    static Freshness of(RelayFixture relay, long fromNanos, long toNanos, long wallOffsetMillis)
        throws Exception {
      Map<String, List<long[]>> arrivals = new TreeMap<>();
      Map<String, Integer> duplicates = new TreeMap<>();
      Set<String> samples = new HashSet<>();
      for (Received r : relay.downstream.received()) {
        if (!HEALTHY.contains(r.tenant())) {
          continue;
        }
        long newest = Long.MIN_VALUE;
        for (TimeSeries s : PrometheusRelayTest.decode(r).getTimeseriesList()) {
          StringBuilder labels = new StringBuilder();
          for (Label l : s.getLabelsList()) {
            labels.append(l.getName()).append('=').append(l.getValue()).append(',');
          }
          for (Sample sample : s.getSamplesList()) {
            newest = Math.max(newest, sample.getTimestamp());
            if (!samples.add(labels + "@" + sample.getTimestamp())) {
              duplicates.merge(r.tenant(), 1, Integer::sum);
            }
          }
        }
        arrivals
            .computeIfAbsent(r.tenant(), t -> new ArrayList<>())
            .add(new long[] {r.atNanos(), newest});
      }
      Map<String, Long> stale = new TreeMap<>();
      for (String tenant : HEALTHY) {
        long newest = Long.MIN_VALUE;
        long worst = 0;
        for (long[] a : arrivals.getOrDefault(tenant, List.of())) {
          if (a[0] - fromNanos > 0 && a[0] - toNanos <= 0) {
            // Just before this arrival the downstream had nothing newer than `newest`.
            long at = wallOffsetMillis + TimeUnit.NANOSECONDS.toMillis(a[0]);
            worst = Math.max(worst, at - newest);
          }
          if (a[0] - toNanos <= 0) {
            newest = Math.max(newest, a[1]);
          }
        }
        long end = wallOffsetMillis + TimeUnit.NANOSECONDS.toMillis(toNanos);
        stale.put(tenant, Math.max(worst, end - newest));
      }
      String metrics = relay.get("/metrics").body();
      return new Freshness(
          stale,
          duplicates,
          answersByStatus(metrics),
          throttledTenants(
              metrics, "relay_tenant_series_dropped_total", Map.of("reason", "throttled")),
          throttledTenants(
              metrics, "relay_tenant_series_failed_total", Map.of("kind", "throttled")),
          throttledTenants(metrics, "relay_tenant_lane_state", Map.of()));
    }

    void assertFresh(Supplier<String> senderLog) {
      for (String tenant : HEALTHY) {
        assertTrue(
            staleMillis.get(tenant) <= FRESH.toMillis(),
            () ->
                tenant
                    + "'s newest sample was "
                    + staleMillis.get(tenant)
                    + " ms behind\n"
                    + senderLog.get());
      }
      assertEquals(Map.of(), duplicates, "every healthy sample arrived once");
      assertTrue(answers.getOrDefault("400", 0.0) > 0, "answers: " + answers);
      for (String status : answers.keySet()) {
        assertTrue(List.of("204", "429", "400").contains(status), "answers: " + answers);
      }
      assertTrue(droppedSeries > 0, "the throttled tenant's loss is counted");
      assertTrue(throttledSeries >= droppedSeries, "every dropped series was throttled first");
      assertEquals(2.0, laneState, "the throttled tenant's lane state");
    }

    @Override
    public String toString() {
      return String.format(
          "healthy tenants at most %s ms behind over %d s; duplicates %s; relay answers %s;"
              + " %s: %.0f series answered 429 downstream, %.0f series dropped (answered 400),"
              + " lane state %.0f",
          staleMillis,
          WATCH.toSeconds(),
          duplicates,
          answers,
          THROTTLED,
          throttledSeries,
          droppedSeries,
          laneState);
    }
  }

  /**
   * The throttled tenant's value of a per-tenant relay metric (with {@code labels} among its
   * labels); 0 while the relay has not exported it (a counter not incremented yet).
   */
  private static double throttledTenants(String metrics, String name, Map<String, String> labels) {
    Map<String, String> all = new java.util.HashMap<>(labels);
    all.put("tenant", THROTTLED);
    return Scrape.sumOr(metrics, name, all, 0);
  }

  private static double relayValue(RelayFixture relay, String name, String reason) {
    try {
      return throttledTenants(relay.get("/metrics").body(), name, Map.of("reason", reason));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code relay_requests_total} by its {@code status} label. */
  private static Map<String, Double> answersByStatus(String metrics) {
    Map<String, Double> m = new TreeMap<>();
    Matcher r =
        Pattern.compile("^relay_requests_total\\{status=\"(\\d+)\"\\} (\\S+)$", Pattern.MULTILINE)
            .matcher(metrics);
    while (r.find()) {
      m.merge(r.group(1), Double.parseDouble(r.group(2)), Double::sum);
    }
    return m;
  }

  private static double query(PrometheusProcess sender, String promql) {
    List<PrometheusProcess.Series> result = sender.query(promql);
    return result.isEmpty() ? 0 : result.get(0).asDouble();
  }
}
