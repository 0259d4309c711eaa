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
    // The hold of UNREADABLE is the one the state had (queue mode: 100 ms from 10 ms ago).
    long until = event == Event.UNREADABLE ? START + holdMillis * MS : now + holdMillis * MS;
    if (event != Event.UNREADABLE) {
      assertEquals(holdMillis * MS, hold, "hold returned");
    }
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
