package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.config.DeliveryConfig;
import io.prwrelay.server.isolation.IdRequests.Part;
import io.prwrelay.server.isolation.RetryingSenders.Batch;
import io.prwrelay.server.isolation.RetryingSenders.Result;
import io.prwrelay.server.isolation.SenderConnection.Answer;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Senders that retry 429 like Prometheus with {@code retry_on_http_429: true}, each batch carrying
 * ten healthy tenants and one tenant the downstream always throttles (429 with {@code Retry-After:
 * 1}, as Mimir answers).
 *
 * <p>In queue mode every batch is answered 204 once on disk, so the senders move on and the healthy
 * tenants stay fresh, while the throttled tenant's queue fills to its bound and drops its oldest
 * records, counted. In sync mode, the default policy ({@code relay.delivery.throttled.policy=drop})
 * answers a batch 429 twice (its healthy tenants delivered at the first attempt, each retry
 * re-sending only the throttled tenant, the ledger) and then 400 naming the throttled tenant: the
 * sender drops the batch and moves on, so the healthy tenants stay fresh without a disk, and the
 * throttled tenant's loss is counted. With {@code policy=strict} the relay answers 429 for as long
 * as the tenant is throttled, and each sender retries its first batch for ever, as Prometheus does:
 * its newer samples never leave it.
 *
 * <p>Its freshness bounds are absolute, not relative to a control run, so it runs in a test JVM of
 * its own with no other test class beside it (tag {@code alone}, see relay-server's pom.xml).
 */
@Tag("alone")
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class RetryingSendersFreshnessTest {
  private static final int SENDERS = 4;

  /**
   * How long the senders send. The throttled tenant's queue reaches its bound after about 3.5 s
   * (measured: about 35 batches a second of 100 series, some 85 queued bytes a series), so the
   * second half of the run sees it full and dropping while the healthy tenants stay fresh; in sync
   * mode each sender retries about once a second ({@code Retry-After: 1}), several times.
   */
  private static final Duration RUN = Duration.ofSeconds(8);

  private static final Duration FRESH = Duration.ofSeconds(3);
  private static final long MAX_TENANT_BYTES = 1 << 20;
  private static final String BAD = IsolationRun.BAD;

  /** Healthy tenants with five series each; the throttled one with 100 series of 64 random hex. */
  private static final List<Part> PARTS = parts();

  @TempDir Path dir;

  private static List<Part> parts() {
    List<Part> parts = new ArrayList<>();
    for (String tenant : IsolationRun.HEALTHY) {
      parts.add(new Part(tenant, 5));
    }
    parts.add(new Part(BAD, 100, 64));
    return List.copyOf(parts);
  }

  private static Result run(RelayFixture relay) throws Exception {
    Reply throttled = Reply.retryAfter(429, "1");
    relay.downstream.rule(BAD, () -> throttled);
    Result r = new RetryingSenders(relay.relay.address(), SENDERS, PARTS).run(RUN);
    assertEquals(List.of(), r.failures(), "sender failures");
    return r;
  }

  private static Set<String> healthyIds(List<Batch> batches, String tenant) {
    Set<String> ids = new HashSet<>();
    for (Batch b : batches) {
      ids.addAll(b.request().ids(tenant));
    }
    return ids;
  }

  private static void assertHealthyExactlyOnce(DeliveredSeries delivered, Result r)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    List<String> problems;
    while (true) {
      delivered.update();
      problems = new ArrayList<>();
      for (String tenant : IsolationRun.HEALTHY) {
        problems.addAll(delivered.exactlyOnce(tenant, healthyIds(r.batches(), tenant)));
      }
      if (problems.isEmpty() || System.nanoTime() - deadline > 0) {
        break;
      }
      Thread.sleep(100);
    }
    assertEquals(List.of(), problems, "healthy series at the downstream");
  }

  /**
   * Asserts that from the run's second second on, every healthy tenant's newest sample at the
   * downstream was never older than {@code fresh}; returns the worst age seen, in milliseconds.
   */
  private static long assertHealthyFresh(DeliveredSeries delivered, Result r, Duration fresh) {
    long from = r.startNanos() + TimeUnit.SECONDS.toNanos(1);
    long to = r.startNanos() + RUN.toNanos();
    long worst = 0;
    for (String tenant : IsolationRun.HEALTHY) {
      long age = delivered.worstAgeMillis(tenant, from, to, r.startMillis(), r.startNanos());
      worst = Math.max(worst, age);
      assertTrue(
          age <= fresh.toMillis(),
          () -> tenant + "'s newest sample at the downstream was " + age + " ms old");
    }
    return worst;
  }

  @Test
  void queueModeKeepsHealthyTenantsFreshWhileTheThrottledTenantsQueueDropsItsOldest()
      throws Exception {
    // The opt-in policy under which a full queue drops its own oldest records (the default
    // refuses new ones instead, answered 503).
    Map<String, String> config =
        BadTenants.settings(
            Map.of(
                "relay.delivery.queue.full-policy",
                "drop-oldest",
                "relay.delivery.mode",
                "queue",
                "relay.delivery.queue.dir",
                dir.toString(),
                "relay.delivery.queue.max-tenant-bytes",
                Long.toString(MAX_TENANT_BYTES),
                "relay.delivery.queue.segment-bytes",
                "64KiB"));
    try (RelayFixture relay = new RelayFixture(config)) {
      Result r = run(relay);
      for (Batch b : r.batches()) {
        assertEquals(1, b.answers().size(), () -> b.request().id() + ": " + b.answers());
        assertEquals(204, b.answers().get(0).status(), () -> b.request().id() + ": " + b.answers());
      }
      DeliveredSeries delivered = new DeliveredSeries(relay.downstream);
      assertHealthyExactlyOnce(delivered, r);

      long worst = assertHealthyFresh(delivered, r, FRESH);

      String metrics = relay.get("/metrics").body();
      double dropped =
          Scrape.sumOr(
              metrics,
              "relay_tenant_series_dropped_total",
              Map.of("tenant", BAD, "reason", "bytes"),
              0);
      double queued = Scrape.sumOr(metrics, "relay_tenant_queue_bytes", Map.of("tenant", BAD), 0);
      double healthyQueued = 0;
      for (String tenant : IsolationRun.HEALTHY) {
        healthyQueued +=
            Scrape.sumOr(metrics, "relay_tenant_queue_bytes", Map.of("tenant", tenant), 0);
      }
      System.out.printf(
          "queue freshness: %d batches, all 204; healthy tenants' newest sample at most %d ms old;"
              + " bad tenant: %.0f series dropped for bytes, %.0f bytes queued (bound %d); %s%n",
          r.batches().size(),
          worst,
          dropped,
          queued,
          MAX_TENANT_BYTES,
          relay.downstream.counts().get(BAD));
      assertTrue(
          dropped > 0, "the throttled tenant's queue dropped its oldest series:\n" + metrics);
      assertTrue(
          queued <= MAX_TENANT_BYTES && queued >= MAX_TENANT_BYTES / 2,
          "the throttled tenant's queue is full up to its bound: " + queued);
      assertEquals(0, healthyQueued, "healthy queues are empty");
    }
  }

  /** Healthy freshness the default sync mode keeps with senders that retry 429 for ever. */
  private static final Duration FRESH_SYNC = Duration.ofSeconds(5);

  @Test
  void syncModeKeepsHealthyTenantsFreshByAnsweringABodyThrottledTooOften400() throws Exception {
    int retries = Integer.parseInt(DeliveryConfig.THROTTLED_RETRIES.defaultValue());
    try (RelayFixture relay = new RelayFixture(BadTenants.settings(Map.of()))) {
      Result r = run(relay);
      int dropped = 0;
      for (Batch b : r.batches()) {
        List<Answer> answers = b.answers();
        for (int i = 0; i < answers.size(); i++) {
          Answer a = answers.get(i);
          boolean last = i == answers.size() - 1;
          if (i < retries) {
            assertEquals(429, a.status(), () -> b.request().id() + ": " + answers);
          } else {
            assertEquals(retries, i, () -> b.request().id() + ": at most the retries: " + answers);
            assertEquals(400, a.status(), () -> b.request().id() + ": " + answers);
            assertTrue(last, () -> b.request().id() + ": 400 ends the batch: " + answers);
            assertTrue(a.body().contains("tenant " + BAD), a.body());
            dropped++;
          }
        }
      }
      assertTrue(dropped >= SENDERS, "every sender moved past a dropped batch: " + dropped);
      DeliveredSeries delivered = new DeliveredSeries(relay.downstream);
      assertHealthyExactlyOnce(delivered, r);

      long worst = assertHealthyFresh(delivered, r, FRESH_SYNC);
      String metrics = relay.get("/metrics").body();
      double lost =
          Scrape.sumOr(
              metrics,
              "relay_tenant_series_dropped_total",
              Map.of("tenant", BAD, "reason", "throttled"),
              0);
      System.out.printf(
          "sync freshness (policy drop): %d batches, %d answered 400 after %d 429s; healthy"
              + " tenants' newest sample at most %d ms old; throttled tenant: %.0f series"
              + " dropped, counted%n",
          r.batches().size(), dropped, retries, worst, lost);
      assertEquals(dropped * 100.0, lost, "each dropped batch's throttled series are counted");
    }
  }

  @Test
  void strictPolicyAnswers429ForEverAndTheSendersNeverGetPastTheirFirstBatch() throws Exception {
    try (RelayFixture relay =
        new RelayFixture(
            BadTenants.settings(Map.of("relay.delivery.throttled.policy", "strict")))) {
      Result r = run(relay);
      for (Batch b : r.batches()) {
        for (Answer a : b.answers()) {
          assertEquals(429, a.status(), () -> b.request().id() + ": " + a);
          // Its healthy tenants were delivered: the throttled tenant's lane keeps the
          // downstream's delay, and the sender is not told to wait it out.
          assertNull(a.retryAfter(), () -> b.request().id() + ": " + a);
        }
      }
      assertEquals(SENDERS, r.batches().size(), "each sender is still retrying its first batch");
      DeliveredSeries delivered = new DeliveredSeries(relay.downstream);
      assertHealthyExactlyOnce(delivered, r);

      // The relay holds nothing back: each batch's healthy series arrived right after its first
      // attempt, and every retry sent only the throttled tenant.
      // (Measured against the instant each batch's first answer was read, not a fixed time, so a
      // loaded machine that answers slowly does not fail it; and not against the batch's start plus
      // the answer's round trip, which leaves out the connection's opening before the first post.)
      long slowest = 0;
      long late = 0;
      for (Batch b : r.batches()) {
        long firstAnswered = b.answers().get(0).readNanos();
        for (String tenant : IsolationRun.HEALTHY) {
          for (String id : b.request().ids(tenant)) {
            long arrived = delivered.firstArrivalNanos(id);
            slowest = Math.max(slowest, arrived - b.firstNanos());
            if (arrived - firstAnswered > 0) {
              late++;
            }
          }
        }
      }
      long healthySeries = 5L * IsolationRun.HEALTHY.size();
      long retries = r.attempts() - r.batches().size();
      double skipped =
          Scrape.sumOr(
              relay.get("/metrics").body(), "relay_ledger_skipped_series_total", Map.of(), 0);
      long to = r.startNanos() + RUN.toNanos();
      long age =
          delivered.worstAgeMillis(
              IsolationRun.HEALTHY.get(0), to, to, r.startMillis(), r.startNanos());
      System.out.printf(
          "sync freshness (policy strict): %d batches sent %d times, all 429; healthy series"
              + " arrived %.1f ms at most after their batch's first attempt, each once; %.0f series"
              + " skipped by the ledger; bad tenant %s; the newest healthy sample is %d ms old at"
              + " the end%n",
          r.batches().size(),
          r.attempts(),
          slowest / 1e6,
          skipped,
          relay.downstream.counts().get(BAD),
          age);
      assertTrue(retries >= 3L * SENDERS, "every sender retried: " + r.attempts() + " attempts");
      assertEquals(
          0, late, "healthy series that arrived only after their batch's first answer (429)");
      assertEquals(
          retries * healthySeries, skipped, 0.0, "every retry skipped every healthy series");
      assertTrue(
          age >= RUN.minusSeconds(2).toMillis(),
          "the senders never got past their first batch, so healthy data is stale: " + age);
    }
  }
}
