package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.config.DeliveryConfig;
import io.prwrelay.server.isolation.BadTenants.Expectation;
import io.prwrelay.server.isolation.BadTenants.LeakDetection;
import io.prwrelay.server.isolation.BadTenants.Relays;
import io.prwrelay.server.isolation.IsolationRun.Exchange;
import io.prwrelay.server.isolation.IsolationRun.Kind;
import io.prwrelay.server.isolation.IsolationRun.Result;
import io.prwrelay.server.isolation.IsolationRun.Side;
import io.prwrelay.server.isolation.SenderConnection.Answer;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Sync mode, end to end over real sockets: one bad tenant among ten healthy ones changes nothing
 * for the senders that do not carry it, and costs the senders that carry it only that tenant's own
 * outcome; every healthy series reaches the downstream exactly once, retries of the same body
 * included (the ledger). The relay's deadline is 3 s and one attempt's 1 s, so the slow tenant's 5
 * s answers end in time-outs; retries back off 20 to 100 ms (the test fixture's settings).
 *
 * <p>Tagged {@code isolation}: it keeps both cores busy, so it runs after the other test classes,
 * with nothing beside it (see relay-server's pom.xml).
 */
@Tag("isolation")
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SyncModeIsolationTest {
  private static final Duration DEADLINE = BadTenants.DEADLINE;

  /** {@code relay.downstream.retry.max-backoff} of the test fixture. */
  private static final long MAX_BACKOFF_MILLIS = 100;

  /**
   * Runs {@link BadTenants#runAndCheck} as {@code label} against two new sync-mode relays, the bad
   * tenant answered by {@code bad}.
   */
  private static void runAndCheck(String label, Supplier<Reply> bad, Expectation expect)
      throws Exception {
    try (Relays relays = Relays.start("sync", () -> BadTenants.settings(Map.of()))) {
      BadTenants.runAndCheck(label, relays, bad, expect, Duration.ZERO);
    }
  }

  /**
   * Asserts that every answer to the mixing senders at the bad relay, warm-up included, has {@code
   * status}, and checks it with {@code check}.
   */
  private static void eachMixingAnswer(Result r, int status, BiConsumer<Exchange, Answer> check) {
    r.eachAnswer(
        Side.WITH_BAD,
        Kind.MIXING,
        (e, a) -> {
          assertEquals(status, a.status(), () -> e.request().id() + ": " + a);
          check.accept(e, a);
        });
  }

  @Test
  void aThrottledTenantIsAnswered429AsFastAsTheHealthyTenantsAndHoldsBackNoOne() throws Exception {
    runAndCheck(
        "sync 429",
        BadTenants.throttled(),
        new Expectation(
            true,
            r -> {
              // 429, and 400 for a body the mixing sender retried after its 429s
              // (relay.delivery.throttled.policy=drop, .retries).
              r.eachAnswer(
                  Side.WITH_BAD,
                  Kind.MIXING,
                  (e, a) -> {
                    if (a.status() == 400) {
                      assertTrue(
                          a.body()
                              .contains(
                                  "were dropped after "
                                      + DeliveryConfig.THROTTLED_RETRIES.defaultValue()
                                      + " answer"),
                          () -> e.request().id() + ": " + a);
                    } else {
                      assertEquals(429, a.status(), () -> e.request().id() + ": " + a);
                    }
                    assertNull(a.retryAfter(), "the downstream gave no Retry-After: none known");
                    assertTrue(a.body().contains("tenant bad"), a.body());
                  });
              return null;
            }));
  }

  @Test
  void aSlowTenantHoldsOnlyTheRequestsThatCarryIt() throws Exception {
    runAndCheck(
        "sync slow",
        BadTenants.slow(),
        new Expectation(
            false,
            r -> {
              List<Long> times = new ArrayList<>();
              eachMixingAnswer(
                  r,
                  503,
                  (e, a) -> {
                    times.add(a.nanos());
                    assertTrue(
                        a.nanos() <= DEADLINE.plusMillis(500).toNanos(),
                        () -> e.request().id() + " answered after the deadline: " + a);
                  });
              System.out.println("sync slow: 503 answers " + new Latencies(times));
              return null;
            }));
  }

  @Test
  void aTenantFailingInBurstsIsAnswered503FastAndHoldsBackNoOne() throws Exception {
    runAndCheck(
        "sync 503 bursts",
        BadTenants.burstsOf503(),
        new Expectation(false, SyncModeIsolationTest::burstAnswers));
  }

  /**
   * Requests carrying the bad tenant are answered 2xx between its bursts and 503 during them,
   * without {@code Retry-After}: their healthy tenants were delivered, and the bad tenant's lane
   * keeps its own backoff. While the lane backs off the tenant's fragments are answered at once, so
   * most 503s cost nothing beyond the healthy tenants (their median is within the control's bound);
   * the first ones of a burst wait for the lane's two quick retries, each after at most the maximum
   * backoff (their p99 within twice that plus the control's bound), and none waits for the
   * deadline.
   */
  private static String burstAnswers(Result r) {
    List<Long> failed = new ArrayList<>();
    int ok = 0;
    for (Exchange e : r.every(Side.WITH_BAD, Kind.MIXING)) {
      for (Answer a : e.answers()) {
        if (a.ok()) {
          ok++;
          continue;
        }
        assertEquals(503, a.status(), () -> e.request().id() + ": " + a);
        assertNull(a.retryAfter(), () -> e.request().id() + ": " + a);
        assertTrue(a.nanos() < DEADLINE.toNanos() / 2, () -> e.request().id() + ": " + a);
        if (r.of(Side.WITH_BAD, Kind.MIXING).contains(e)) {
          failed.add(a.nanos());
        }
      }
    }
    Latencies failures = new Latencies(failed);
    Latencies control = r.firstAnswers(Side.CONTROL, Kind.MIXING);
    System.out.println("sync 503 bursts: " + ok + " answers 2xx; 503 answers " + failures);
    assertTrue(ok > 0 && failures.count() > 0, "2xx between bursts and 503 during them");
    if (failures.p50() > 1.2 * control.p50() + BadTenants.ALLOWANCE_MILLIS
        || failures.p99()
            > 2 * MAX_BACKOFF_MILLIS + 1.2 * control.p99() + BadTenants.ALLOWANCE_MILLIS) {
      return "503 answers " + failures + ", control " + control;
    }
    return null;
  }
}
