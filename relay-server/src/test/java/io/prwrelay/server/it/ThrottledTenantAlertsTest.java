package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.config.DeliveryConfig;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example alert rules ({@code docker/alerts.yml}) evaluated by promtool's rule unit tests on
 * series a real relay exported: a relay in front of a downstream that answers one tenant 429
 * without {@code Retry-After} (as Cortex does over its ingestion rate), in sync and in queue mode,
 * scraped after each round of writes. Each scrape becomes one minute of the test's input series
 * ({@link ScrapedSeries}), so that the rules' {@code for} durations pass.
 *
 * <p>In both modes the throttled tenant means one thing: its lane state is 2 ({@code
 * relay_tenant_lane_state}, {@code relay_lanes_not_healthy{state="throttled"}}), its undelivered
 * series count as {@code relay_tenant_series_failed_total{kind="throttled"}}, and the only alert
 * that fires is {@code PrwRelayTenantThrottled} for that tenant: not {@code PrwRelayTenantFailing},
 * nor {@code PrwRelayQueueDropping} for the batches that sync mode's default policy drops after
 * 429s.
 *
 * <p>Skipped where promtool is not installed, except in CI ({@code CI=true}), which installs it
 * with the Debian {@code prometheus} package.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ThrottledTenantAlertsTest {
  private static final Path RULES =
      Paths.get("..", "docker", "alerts.yml").toAbsolutePath().normalize();
  private static final String THROTTLED = "tenant-throttled";
  private static final List<String> HEALTHY = List.of("tenant-a", "tenant-b");
  private static final String INSTANCE = "relay:8080";

  /** One scrape per round, one round per minute of rule time: past {@code for: 30m}. */
  private static final int ROUNDS = 40;

  @TempDir Path dir;

  private String promtool;

  @BeforeEach
  void needsPromtool() {
    promtool = onPath("promtool");
    if (promtool == null && "true".equalsIgnoreCase(System.getenv("CI"))) {
      Assertions.fail("promtool is required in CI (Debian package prometheus)");
    }
    Assumptions.assumeTrue(promtool != null, "promtool is not on the PATH: not run");
  }

  /**
   * Sync mode, default policy: every round's request is answered 429 and then 400 ({@code
   * relay.delivery.throttled.retries}; a sender that retries 429, such as vmagent, drops it then),
   * its healthy tenants delivered at the first attempt.
   */
  @Test
  void syncModeThrottledTenantFiresOnlyTheThrottledAlert() throws Exception {
    ScrapedSeries scrapes = new ScrapedSeries("prw-relay", INSTANCE);
    try (RelayFixture relay = new RelayFixture(Map.of())) {
      throttle(relay.downstream);
      for (int round = 0; round < ROUNDS; round++) {
        byte[] body = request(round);
        List<Integer> answers = new ArrayList<>();
        int status;
        do {
          status = relay.write(body).statusCode();
          answers.add(status);
        } while (status == 429 && answers.size() < 5);
        assertEquals(throttledAnswers(), answers, "answers to round " + round);
        scrapes.add(relay.get("/metrics").body());
      }
    }
    promtoolTest(
        "sync",
        scrapes,
        """
              - expr: count by (tenant, reason) (increase(relay_tenant_series_dropped_total[10m]) > 0)
                eval_time: %s
                exp_samples:
                  - labels: '{reason="throttled",tenant="%s"}'
                    value: 1
        """
            .formatted(evalTime(), THROTTLED));
  }

  /**
   * Queue mode: every request is answered 204 (the healthy tenants delivered directly, the
   * throttled one queued), and the throttled tenant's queue is sent again after each backoff and
   * answered 429 again; each round waits for one more such answer.
   */
  @Test
  void queueModeThrottledTenantFiresOnlyTheThrottledAlert() throws Exception {
    ScrapedSeries scrapes = new ScrapedSeries("prw-relay", INSTANCE);
    Map<String, String> queue =
        Map.of(
            "relay.delivery.mode",
            "queue",
            "relay.delivery.queue.dir",
            dir.resolve("q").toString());
    try (RelayFixture relay = new RelayFixture(queue)) {
      throttle(relay.downstream);
      for (int round = 0; round < ROUNDS; round++) {
        long before = throttledAnswers(relay.downstream, THROTTLED);
        assertEquals(204, relay.write(request(round)).statusCode(), "round " + round);
        assertTrue(
            Await.within(
                Duration.ofSeconds(10),
                () -> throttledAnswers(relay.downstream, THROTTLED) > before),
            "the throttled tenant's queue is sent again");
        scrapes.add(relay.get("/metrics").body());
      }
    }
    promtoolTest(
        "queue",
        scrapes,
        """
              - expr: relay_tenant_series_dropped_total
                eval_time: %s
                exp_samples: []
        """
            .formatted(evalTime()));
  }

  /** The default policy's answers to a body whose only failing tenant is throttled. */
  private static List<Integer> throttledAnswers() {
    List<Integer> answers = new ArrayList<>();
    for (int i = Integer.parseInt(DeliveryConfig.THROTTLED_RETRIES.defaultValue()); i > 0; i--) {
      answers.add(429);
    }
    answers.add(400);
    return answers;
  }

  private static void throttle(ScriptedDownstream downstream) {
    Reply cortex =
        Reply.status(
            429, "ingestion rate limit (10000) exceeded while adding 3 samples and 0 metadata");
    downstream.rule(THROTTLED, () -> cortex);
  }

  /** Requests of {@code tenant} the downstream answered 429 so far. */
  private static long throttledAnswers(ScriptedDownstream downstream, String tenant) {
    ScriptedDownstream.TenantCount c = downstream.counts().get(tenant);
    return c == null ? 0 : c.answers().getOrDefault(429, 0L);
  }

  /** A request of round {@code round}: three series of each healthy tenant and of the throttled. */
  private static byte[] request(int round) {
    WriteRequestEncoder e = new WriteRequestEncoder();
    long now = System.currentTimeMillis();
    List<String> tenants = new ArrayList<>(HEALTHY);
    tenants.add(THROTTLED);
    for (String tenant : tenants) {
      for (int i = 0; i < 3; i++) {
        e.beginSeries()
            .label("__name__", "alerts_test")
            .label("id", round + "/" + i)
            .label("service_id", tenant)
            .sample(round, now)
            .endSeries();
      }
    }
    return e.toByteArray();
  }

  private static String evalTime() {
    return (ROUNDS - 1) + "m";
  }

  /**
   * Writes the promtool test for {@code scrapes} (kept under {@code target/alert-tests} for a
   * reader) and runs it: at the last scrape exactly one alert is pending or firing, {@code
   * PrwRelayTenantThrottled} for the throttled tenant, firing; the lane states are 2 for it and 0
   * for the others; only it has failed series, all of them {@code kind="throttled"}; plus {@code
   * extraExprTests}.
   */
  private void promtoolTest(String mode, ScrapedSeries scrapes, String extraExprTests)
      throws Exception {
    assertEquals(ROUNDS, scrapes.scrapes());
    String at = evalTime();
    StringBuilder lanes = new StringBuilder();
    for (String tenant : HEALTHY) {
      lanes.append(laneState(tenant, 0));
    }
    lanes.append(laneState(THROTTLED, 2));
    String test =
        """
        rule_files:
          - '%s'
        evaluation_interval: 1m
        tests:
          - name: %s mode, tenant %s answered 429 without Retry-After
            interval: 1m
            input_series:
        %s
            promql_expr_test:
              - expr: ALERTS
                eval_time: %s
                exp_samples:
                  - labels: 'ALERTS{alertname="PrwRelayTenantThrottled",alertstate="firing",instance="%s",severity="info",tenant="%s"}'
                    value: 1
              - expr: relay_tenant_lane_state
                eval_time: %s
                exp_samples:
        %s
              - expr: relay_lanes_not_healthy
                eval_time: %s
                exp_samples:
                  - labels: 'relay_lanes_not_healthy{instance="%s",job="prw-relay",state="backing_off"}'
                    value: 0
                  - labels: 'relay_lanes_not_healthy{instance="%s",job="prw-relay",state="rejecting"}'
                    value: 0
                  - labels: 'relay_lanes_not_healthy{instance="%s",job="prw-relay",state="throttled"}'
                    value: 1
              - expr: count by (tenant, kind) (increase(relay_tenant_series_failed_total[10m]) > 0)
                eval_time: %s
                exp_samples:
                  - labels: '{kind="throttled",tenant="%s"}'
                    value: 1
        %s
        """
            .formatted(
                RULES,
                mode,
                THROTTLED,
                scrapes.inputSeriesYaml("      ").stripTrailing(),
                at,
                INSTANCE,
                THROTTLED,
                at,
                lanes.toString().stripTrailing(),
                at,
                INSTANCE,
                INSTANCE,
                INSTANCE,
                at,
                THROTTLED,
                extraExprTests.stripTrailing());
    Path out = Paths.get("target", "alert-tests");
    Files.createDirectories(out);
    Path file = out.resolve(mode + "-mode-throttled-tenant.test.yml");
    Files.writeString(file, test);
    Process p =
        new ProcessBuilder(promtool, "test", "rules", file.toAbsolutePath().toString())
            .redirectErrorStream(true)
            .start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "promtool finished");
    assertEquals(
        0,
        p.exitValue(),
        () ->
            "promtool test rules "
                + file.toAbsolutePath()
                + "\n"
                + output
                + "\nthe throttled tenant's lane state, failed and dropped series as scraped: "
                + scrapes.matching("tenant=\"" + THROTTLED + "\"").entrySet().stream()
                    .filter(
                        e ->
                            e.getKey()
                                .matches(
                                    "relay_tenant_(lane_state|series_failed|series_dropped).*"))
                    .toList());
  }

  private static String laneState(String tenant, int state) {
    return """
                  - labels: 'relay_tenant_lane_state{instance="%s",job="prw-relay",tenant="%s"}'
                    value: %d
        """
        .formatted(INSTANCE, tenant, state);
  }

  private static String onPath(String name) {
    for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path p = Path.of(d, name);
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    Path fallback = Path.of("/usr/bin", name);
    return Files.isExecutable(fallback) ? fallback.toString() : null;
  }
}
