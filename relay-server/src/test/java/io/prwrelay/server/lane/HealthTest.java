package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.downstream.RetryPolicy;
import io.prwrelay.server.lane.Health.Event;
import io.prwrelay.server.lane.Lane.State;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The lane's health state machine, event by event, in simulated time (the ticker is a number the
 * test moves). Backoff starts at 100 ms and doubles up to 2 s, without jitter (the largest delay of
 * each step), so every hold is exact.
 */
class HealthTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  /** Near the ticker's wrap, so every comparison must be made by difference, as the lane does. */
  private static final long START = Long.MAX_VALUE - 150 * MS;

  private final List<String> events = new ArrayList<>();

  private Health health(boolean queueMode) {
    RandomGenerator noJitter =
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
    RetryPolicy policy =
        new RetryPolicy(Duration.ofMillis(100), Duration.ofSeconds(2), () -> noJitter);
    LaneObserver observer =
        new LaneObserver() {
          @Override
          public void stateChanged(String tenant, State state, String reason, long delayNanos) {
            events.add(tenant + " " + state + " " + reason + " " + delayNanos / MS + "ms");
          }
        };
    return new Health("a", queueMode, policy, observer, () -> events.add("withdraw"));
  }

  /**
   * Every event from every state, in both modes. {@code from}: HEALTHY is a new lane; THROTTLED and
   * BACKING_OFF are reached by one 429 and one 5xx without {@code Retry-After}. {@code hold}: what
   * the event returns and how long {@code holdsBack} stays true, in milliseconds.
   */
  @ParameterizedTest(name = "{0} {1} + {2} (Retry-After {3}) -> {4}")
  @CsvSource({
    // mode, from, event, Retry-After ms, next state, hold ms, one by one, reported
    "sync,  HEALTHY,     DELIVERED,   -1,  HEALTHY,     0,    false, false",
    "sync,  HEALTHY,     THROTTLED,   -1,  THROTTLED,   0,    true,  true",
    "sync,  HEALTHY,     THROTTLED,   300, THROTTLED,   300,  true,  true",
    "sync,  HEALTHY,     FAILED,      -1,  BACKING_OFF, 100,  false, true",
    "sync,  HEALTHY,     FAILED,      300, BACKING_OFF, 300,  false, true",
    "sync,  THROTTLED,   DELIVERED,   -1,  HEALTHY,     0,    false, true",
    "sync,  THROTTLED,   THROTTLED,   -1,  THROTTLED,   0,    true,  true",
    "sync,  THROTTLED,   FAILED,      -1,  BACKING_OFF, 100,  true,  true",
    "sync,  BACKING_OFF, DELIVERED,   -1,  HEALTHY,     0,    false, true",
    "sync,  BACKING_OFF, THROTTLED,   -1,  THROTTLED,   0,    true,  true",
    "sync,  BACKING_OFF, FAILED,      -1,  BACKING_OFF, 200,  false, true",
    "queue, HEALTHY,     DELIVERED,   -1,  HEALTHY,     0,    false, false",
    "queue, HEALTHY,     THROTTLED,   -1,  THROTTLED,   100,  true,  true",
    "queue, HEALTHY,     THROTTLED,   300, THROTTLED,   300,  true,  true",
    "queue, HEALTHY,     FAILED,      -1,  BACKING_OFF, 100,  true,  true",
    "queue, HEALTHY,     READ_FAILED, 300, BACKING_OFF, 100,  false, true",
    "queue, HEALTHY,     UNREADABLE,  -1,  HEALTHY,     0,    true,  false",
    "queue, THROTTLED,   DELIVERED,   -1,  HEALTHY,     0,    false, true",
    "queue, THROTTLED,   THROTTLED,   -1,  THROTTLED,   200,  true,  true",
    "queue, THROTTLED,   FAILED,      -1,  BACKING_OFF, 200,  true,  true",
    "queue, THROTTLED,   READ_FAILED, -1,  BACKING_OFF, 200,  true,  true",
    "queue, THROTTLED,   UNREADABLE,  -1,  THROTTLED,   100,  true,  false",
    "queue, BACKING_OFF, DELIVERED,   -1,  HEALTHY,     0,    false, true",
    "queue, BACKING_OFF, THROTTLED,   -1,  THROTTLED,   200,  true,  true",
    "queue, BACKING_OFF, FAILED,      -1,  BACKING_OFF, 200,  true,  true",
    "queue, BACKING_OFF, READ_FAILED, -1,  BACKING_OFF, 200,  true,  true",
    // One rejection changes no state and keeps the hold running (REJECTING_AFTER: below).
    "sync,  HEALTHY,     REJECTED,    -1,  HEALTHY,     0,    false, false",
    "sync,  THROTTLED,   REJECTED,    -1,  THROTTLED,   0,    true,  false",
    "sync,  BACKING_OFF, REJECTED,    -1,  BACKING_OFF, 100,  false, false",
    "queue, HEALTHY,     REJECTED,    -1,  HEALTHY,     0,    false, false",
    "queue, THROTTLED,   REJECTED,    -1,  THROTTLED,   100,  true,  false",
    "queue, BACKING_OFF, REJECTED,    -1,  BACKING_OFF, 100,  true,  false",
  })
  void transitionTable(
      String mode,
      State from,
      Event event,
      long retryAfterMillis,
      State next,
      long holdMillis,
      boolean oneByOne,
      boolean reported) {
    Health h = health(mode.equals("queue"));
    long now = START;
    if (from == State.THROTTLED) {
      h.on(Event.THROTTLED, "429", -1, now);
    } else if (from == State.BACKING_OFF) {
      h.on(Event.FAILED, "503", -1, now);
    }
    assertEquals(from, h.state());
    events.clear();
    now += 10 * MS;

    long hold = h.on(event, "why", retryAfterMillis, now);

    assertEquals(next, h.state());
    assertEquals(oneByOne, h.oneByOne(), "one by one");
    // The hold of UNREADABLE and of one REJECTED is the one the state had (100 ms from 10 ms
    // ago); they return none of their own.
    boolean keepsHold = event == Event.UNREADABLE || event == Event.REJECTED;
    long until = keepsHold ? START + holdMillis * MS : now + holdMillis * MS;
    assertEquals(keepsHold ? 0 : holdMillis * MS, hold, "hold returned");
    if (next != State.HEALTHY && until - now > 0) {
      assertTrue(h.holdsBack(until - 1), "held back until the last nanosecond");
      assertEquals(1, h.retryAfterMillis(until - 1), "Retry-After of the last nanosecond");
    }
    assertFalse(h.holdsBack(until), "no longer held back once the hold ends");
    assertEquals(-1, h.retryAfterMillis(until));
    if (!reported) {
      assertEquals(List.of(), events);
    } else if (next == State.HEALTHY) {
      assertEquals(List.of("a HEALTHY  0ms"), events);
    } else {
      assertEquals(List.of("withdraw", "a " + next + " why " + holdMillis + "ms"), events);
    }
  }

  @Test
  void theThirdRejectionInARowMakesTheLaneRejectingOnceAndThe2xxAfterItHealthy() {
    Health h = health(false);
    h.on(Event.REJECTED, "downstream answered 400: per-user series limit of 5 exceeded", -1, START);
    h.on(Event.REJECTED, "downstream answered 400: per-user series limit of 5 exceeded", -1, START);
    assertEquals(State.HEALTHY, h.state(), "two rejections may be one sender's bad batches");
    assertEquals(List.of(), events);

    assertEquals(0, h.on(Event.REJECTED, "downstream answered 400: limit", -1, START));

    assertEquals(State.REJECTING, h.state());
    assertEquals("downstream answered 400: limit", h.reason());
    assertFalse(h.holdsBack(START), "every batch is still sent: the next may be accepted");
    assertFalse(h.oneByOne(), "and still merged");
    assertEquals(List.of("withdraw", "a REJECTING downstream answered 400: limit 0ms"), events);
    for (int i = 0; i < 5; i++) {
      h.on(Event.REJECTED, "downstream answered 400: another", -1, START + i * MS);
    }
    assertEquals(State.REJECTING, h.state());
    assertEquals(2, events.size(), "entered once, whatever comes after: " + events);
    assertEquals("downstream answered 400: limit", h.reason(), "the reason it entered with");

    h.on(Event.DELIVERED, "", -1, START + 10 * MS);

    assertEquals(State.HEALTHY, h.state());
    assertEquals("a HEALTHY  0ms", events.get(2));
    h.on(Event.REJECTED, "400", -1, START + 11 * MS);
    h.on(Event.REJECTED, "400", -1, START + 12 * MS);
    assertEquals(State.HEALTHY, h.state(), "a 2xx starts the count again");
    assertEquals(3, events.size());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"THROTTLED, THROTTLED", "FAILED, BACKING_OFF", "READ_FAILED, BACKING_OFF"})
  void anyOtherAnswerBetweenRejectionsStartsTheCountAgain(Event between, State state) {
    Health h = health(true);
    h.on(Event.REJECTED, "400", -1, START);
    h.on(Event.REJECTED, "400", -1, START);
    h.on(between, "5xx or 429", -1, START);
    h.on(Event.REJECTED, "400", -1, START);
    h.on(Event.REJECTED, "400", -1, START);
    assertEquals(state, h.state(), "two rejections since " + between);
    h.on(Event.REJECTED, "400", -1, START);
    assertEquals(State.REJECTING, h.state(), "the third");
  }

  @Test
  void aRecordReadAgainAloneDoesNotStartTheCountAgain() {
    Health h = health(true);
    h.on(Event.REJECTED, "400", -1, START);
    h.on(Event.UNREADABLE, "", -1, START);
    h.on(Event.REJECTED, "400", -1, START);
    h.on(Event.REJECTED, "400", -1, START);
    assertEquals(State.REJECTING, h.state());
    assertTrue(h.oneByOne(), "records still read one at a time until a send succeeds");
  }

  @Test
  void aLaneBackingOffThatIsRejectedThreeTimesEndsItsHoldAndKeepsItsFailureCount() {
    Health h = health(false);
    assertEquals(100, h.on(Event.FAILED, "503", -1, START) / MS);
    for (int i = 1; i <= 3; i++) {
      h.on(Event.REJECTED, "downstream answered 400: bad", -1, START + i * MS);
    }
    assertEquals(State.REJECTING, h.state());
    assertFalse(h.holdsBack(START + 3 * MS), "the downstream answers again: nothing waits");
    assertEquals(
        200, h.on(Event.FAILED, "503", -1, START + 4 * MS) / MS, "the second failure since a 2xx");
    assertEquals(State.BACKING_OFF, h.state(), "a failure enters its own state");
    for (int i = 5; i <= 7; i++) {
      h.on(Event.REJECTED, "400", -1, START + i * MS);
    }
    assertEquals(State.REJECTING, h.state(), "and three more rejections make it rejecting again");
    assertEquals(
        List.of(
            "withdraw",
            "a BACKING_OFF 503 100ms",
            "withdraw",
            "a REJECTING downstream answered 400: bad 0ms",
            "withdraw",
            "a BACKING_OFF 503 200ms",
            "withdraw",
            "a REJECTING 400 0ms"),
        events);
  }

  @Test
  void consecutiveFailuresDoubleTheBackoffUpToItsMaximumAndA2xxStartsOver() {
    Health h = health(false);
    List<Long> holds = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      holds.add(h.on(Event.FAILED, "503", -1, START) / MS);
    }
    assertEquals(List.of(100L, 200L, 400L, 800L, 1600L, 2000L, 2000L), holds);
    h.on(Event.DELIVERED, "", -1, START);
    assertEquals(100, h.on(Event.FAILED, "503", -1, START) / MS);
  }

  @Test
  void aSyncModeThrottleKeepsTheFailureCountAndQueueModeCountsIt() {
    Health sync = health(false);
    sync.on(Event.FAILED, "503", -1, START);
    sync.on(Event.THROTTLED, "429", -1, START);
    assertEquals(200, sync.on(Event.FAILED, "503", -1, START) / MS, "second failure");

    Health queue = health(true);
    queue.on(Event.FAILED, "503", -1, START);
    queue.on(Event.THROTTLED, "429", -1, START);
    assertEquals(400, queue.on(Event.FAILED, "503", -1, START) / MS, "third failure");
  }

  @Test
  void theReasonIsKeptUntilTheLaneIsHealthyAgain() {
    Health h = health(false);
    h.on(Event.FAILED, "downstream answered 503: down", -1, START);
    assertEquals("downstream answered 503: down", h.reason());
    h.on(Event.THROTTLED, "downstream answered 429: limit", 2_000, START);
    assertEquals("downstream answered 429: limit", h.reason());
    assertEquals(2_001, h.retryAfterMillis(START), "rounded up, never 0 while held back");
    h.on(Event.DELIVERED, "", -1, START);
    assertEquals("", h.reason());
    assertFalse(h.holdsBack(START));
  }
}
