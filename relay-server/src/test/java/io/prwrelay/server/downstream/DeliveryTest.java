package io.prwrelay.server.downstream;

import static io.prwrelay.server.downstream.ScriptedSender.Reply;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.encode.SeriesCounts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Delivery decisions on simulated time, against a scripted {@link TenantSender}: retries and their
 * backoff, {@code Retry-After}, the request deadline, the attempt timeout, the concurrency bound,
 * each batch's final outcome, and that every batch is released exactly once.
 */
class DeliveryTest {
  /** Jitter that always picks the longest delay, so backoff times are exact. */
  private static final RandomGenerator LONGEST =
      new RandomGenerator() {
        @Override
        public long nextLong() {
          return 0;
        }

        @Override
        public long nextLong(long bound) {
          return bound - 1;
        }
      };

  private final SimulatedLoop sim = new SimulatedLoop();
  private final ScriptedSender sender = new ScriptedSender();
  private final List<ByteBuf> bodies = new ArrayList<>();
  private final List<String> events = new ArrayList<>();
  private List<TenantOutcome> outcomes;
  private long doneAtNanos = -1;
  private int doneCalls;

  private final DeliveryObserver observer =
      new DeliveryObserver() {
        @Override
        public void attempt(TenantSend send, AttemptOutcome outcome, long nanos) {
          events.add("attempt " + send.tenant() + " " + outcome.code() + " " + ms(nanos));
        }

        @Override
        public void retry(TenantSend send, AttemptOutcome outcome, long delayNanos) {
          events.add("retry " + send.tenant() + " in " + ms(delayNanos));
        }

        @Override
        public void finished(TenantSend send) {
          events.add("finished " + send.tenant() + " " + send.last().code());
        }
      };

  @AfterEach
  void everyBatchWasReleasedExactlyOnce() {
    assertTrue(sender.releasedBodies().isEmpty(), "sent after release: " + sender.releasedBodies());
    for (ByteBuf b : bodies) {
      assertEquals(0, b.refCnt(), "every batch released at its final outcome");
    }
    assertFalse(sim.channel().finishAndReleaseAll());
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  private Delivery delivery(Duration timeout, Duration attemptTimeout, int maxConcurrent) {
    return delivery(timeout, attemptTimeout, maxConcurrent, Duration.ofSeconds(1));
  }

  private Delivery delivery(
      Duration timeout, Duration attemptTimeout, int maxConcurrent, Duration maxBackoff) {
    return new Delivery(
        sender,
        new RetryPolicy(Duration.ofMillis(100), maxBackoff, () -> LONGEST),
        timeout,
        attemptTimeout,
        maxConcurrent,
        observer);
  }

  /** Starts delivering one batch per tenant (3 series each) at the current simulated time. */
  private void deliver(Delivery d, String... tenants) {
    List<TenantSend> sends = new ArrayList<>();
    for (String t : tenants) {
      ByteBuf body = Unpooled.directBuffer(8).writeLong(42);
      bodies.add(body);
      sends.add(new TenantSend(t, body, new SeriesCounts(3, 3, 0, 0), 100));
    }
    d.deliver(
        sim.loop(),
        sends,
        sim.now(),
        o -> {
          doneCalls++;
          outcomes = o;
          doneAtNanos = sim.now();
        });
    sim.runDue();
  }

  private TenantOutcome outcome(String tenant) {
    assertEquals(1, doneCalls, "done is called exactly once");
    for (TenantOutcome o : outcomes) {
      if (o.tenant().equals(tenant)) {
        return o;
      }
    }
    throw new AssertionError("no outcome for " + tenant + " in " + outcomes);
  }

  private long doneAtMillis() {
    return ms(doneAtNanos);
  }

  /** A 3 s request deadline, 1 s per attempt, 16 batches in flight. */
  private Delivery standard() {
    return delivery(Duration.ofSeconds(3), Duration.ofSeconds(1), 16);
  }

  /** {@code tenant} was sent at exactly these times and finally accepted. */
  private void assertAcceptedAfterCallsAt(String tenant, Long... millis) {
    assertEquals(List.of(millis), sender.callMillis(tenant));
    assertTrue(outcome(tenant).last().success(), outcome(tenant).toString());
    assertEquals(millis.length, outcome(tenant).attempts());
  }

  @Test
  void acceptedBatchIsSentOnce() {
    deliver(standard(), "a", "b");
    assertEquals(200, outcome("a").last().status());
    assertEquals(1, outcome("a").attempts());
    assertEquals(3, outcome("a").series());
    assertEquals(List.of("a", "b"), outcomes.stream().map(TenantOutcome::tenant).toList());
    assertEquals(2, sender.calls().size());
    assertEquals(0, doneAtMillis());
  }

  @Test
  void requestWithoutBatchesIsDoneAtOnce() {
    deliver(standard());
    assertEquals(List.of(), outcomes);
    assertEquals(1, doneCalls);
  }

  @Test
  void serverErrorsAreRetriedWithDoublingBackoffUntilAccepted() {
    sender.script("a", Reply.status(500), Reply.status(503), Reply.status(500));
    deliver(standard(), "a");
    sim.advance(Duration.ofSeconds(3));
    assertAcceptedAfterCallsAt("a", 0L, 100L, 300L, 700L);
    assertEquals(700, doneAtMillis());
  }

  @Test
  void backoffStopsGrowingAtTheMaximum() {
    sender.repeat("a", Reply.status(502), 4);
    deliver(
        delivery(Duration.ofSeconds(3), Duration.ofSeconds(1), 16, Duration.ofMillis(250)), "a");
    sim.advance(Duration.ofSeconds(3));
    assertAcceptedAfterCallsAt("a", 0L, 100L, 300L, 550L, 800L);
  }

  @Test
  void transportFailuresAndRateLimitsAreRetried() {
    sender.script("a", Reply.transport("connection reset"), Reply.status(429));
    deliver(standard(), "a");
    sim.advance(Duration.ofSeconds(3));
    assertAcceptedAfterCallsAt("a", 0L, 100L, 300L);
  }

  @Test
  void rejectionIsNotRetried() {
    sender.script("a", Reply.status(400, "sample too old"));
    deliver(standard(), "a", "b");
    sim.advance(Duration.ofSeconds(3));
    assertEquals(1, sender.callMillis("a").size());
    assertEquals(400, outcome("a").last().status());
    assertEquals("sample too old", outcome("a").last().message());
    assertEquals(200, outcome("b").last().status());
    assertEquals(0, doneAtMillis());
  }

  @Test
  void retryAfterLongerThanTheBackoffIsWaitedFor() {
    sender.script("a", Reply.retryAfter(429, Duration.ofSeconds(1)));
    deliver(standard(), "a");
    sim.advance(Duration.ofSeconds(3));
    assertAcceptedAfterCallsAt("a", 0L, 1000L);
  }

  @Test
  void retryAfterBeyondTheDeadlineEndsTheBatchAtOnce() {
    sender.script("a", Reply.retryAfter(429, Duration.ofSeconds(30)));
    sender.script("b", Reply.retryAfter(429, Duration.ofSeconds(7)));
    deliver(delivery(Duration.ofSeconds(2), Duration.ofSeconds(1), 16), "a", "b");
    assertEquals(0, doneAtMillis(), "no waiting for a retry that cannot happen in time");
    assertEquals(List.of(0L), sender.callMillis("a"));
    assertEquals(429, outcome("a").last().status());
    assertEquals(30_000, outcome("a").last().retryAfterMillis());
    assertEquals(7_000, outcome("b").last().retryAfterMillis());
  }

  @Test
  void persistentFailureIsGivenUpWhenTheNextRetryWouldMissTheDeadline() {
    sender.repeat("a", Reply.status(500, "ingester down"), 100);
    deliver(delivery(Duration.ofSeconds(1), Duration.ofSeconds(1), 16), "a");
    sim.advance(Duration.ofSeconds(5));
    // The retry after 700 ms would wait 800 ms, past the deadline at 1000 ms.
    assertEquals(List.of(0L, 100L, 300L, 700L), sender.callMillis("a"));
    assertEquals(700, doneAtMillis());
    assertEquals(500, outcome("a").last().status());
    assertEquals(4, outcome("a").attempts());
  }

  @Test
  void attemptTimeoutIsTheSmallerOfItsSettingAndTheTimeLeft() {
    sender.repeat("a", Reply.silence(), 10);
    deliver(delivery(Duration.ofMillis(1500), Duration.ofSeconds(1), 16), "a");
    sim.advance(Duration.ofSeconds(5));
    List<Long> timeouts = sender.calls().stream().map(c -> ms(c.timeoutNanos())).toList();
    assertEquals(List.of(1000L, 400L), timeouts, "the retry at 1100 ms has 400 ms left");
    assertEquals(1500, doneAtMillis());
    assertEquals(AttemptOutcome.TRANSPORT_FAILURE, outcome("a").last().status());
    assertTrue(outcome("a").last().message().contains("no response within"));
  }

  @Test
  void slowAttemptIsTimedOutAndRetried() {
    sender.script("a", Reply.status(200).after(Duration.ofSeconds(2)));
    deliver(delivery(Duration.ofSeconds(3), Duration.ofMillis(200), 16), "a");
    sim.advance(Duration.ofSeconds(3));
    assertAcceptedAfterCallsAt("a", 0L, 300L);
  }

  @Test
  void atMostMaxConcurrentBatchesAreInFlight() {
    for (String t : List.of("a", "b", "c", "d", "e")) {
      sender.script(t, Reply.status(200).after(Duration.ofMillis(100)));
    }
    deliver(delivery(Duration.ofSeconds(3), Duration.ofSeconds(1), 2), "a", "b", "c", "d", "e");
    sim.advance(Duration.ofSeconds(1));
    assertEquals(2, sender.maxInFlight());
    assertEquals(
        List.of(0L, 0L, 100L, 100L, 200L),
        sender.calls().stream().map(c -> ms(c.atNanos())).toList());
    assertEquals(300, doneAtMillis());
    assertEquals(5, outcomes.size());
  }

  @Test
  void batchStillWaitingAtTheDeadlineFailsWithoutBeingSent() {
    sender.repeat("a", Reply.silence(), 10);
    deliver(delivery(Duration.ofSeconds(1), Duration.ofSeconds(5), 1), "a", "b");
    sim.advance(Duration.ofSeconds(5));
    assertEquals(1000, doneAtMillis());
    assertEquals(List.of(), sender.callMillis("b"));
    assertEquals(0, outcome("b").attempts());
    assertEquals(
        "request deadline passed before the batch could be sent", outcome("b").last().message());
    assertTrue(outcome("a").last().message().contains("no response within 1000 ms"));
  }

  @Test
  void observerHearsOfEveryAttemptRetryAndFinalOutcome() {
    sender.script("a", Reply.status(503).after(Duration.ofMillis(10)));
    deliver(standard(), "a");
    sim.advance(Duration.ofSeconds(1));
    assertEquals(
        List.of("attempt a 503 10", "retry a in 100", "attempt a 200 0", "finished a 200"), events);
  }

  @Test
  void outcomeOfEveryMixIsReportedPerTenant() {
    sender.script("ok", Reply.status(204));
    sender.script("rejected", Reply.status(413, "too big"));
    sender.repeat("limited", Reply.retryAfter(429, Duration.ofSeconds(60)), 1);
    sender.repeat("down", Reply.status(503), 100);
    sender.repeat("silent", Reply.silence(), 100);
    deliver(
        delivery(Duration.ofSeconds(2), Duration.ofMillis(500), 16),
        "ok",
        "rejected",
        "limited",
        "down",
        "silent");
    sim.advance(Duration.ofSeconds(3));
    assertEquals(204, outcome("ok").last().status());
    assertEquals(413, outcome("rejected").last().status());
    assertEquals(429, outcome("limited").last().status());
    assertEquals(503, outcome("down").last().status());
    assertEquals(AttemptOutcome.TRANSPORT_FAILURE, outcome("silent").last().status());
    assertEquals(1800, doneAtMillis(), "the silent tenant's last attempt timed out at 1800 ms");
  }
}
