package io.prwrelay.server.lane;

import static io.prwrelay.server.lane.LaneTesting.forwardedFragment;
import static io.prwrelay.server.lane.LaneTesting.settings;
import static io.prwrelay.server.lane.LaneTesting.statesInto;
import static io.prwrelay.server.lane.LaneTesting.textFragment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * Lane decisions on a simulated clock: sends, coalescing, linger, backoff, throttling, deadlines
 * and bounds, each fragment answered exactly once with its own outcome. Simulated time runs in
 * microseconds of real time; a lane that keeps waking itself without progress fails the test at the
 * time limit instead of hanging the build.
 */
@Timeout(value = 30, threadMode = ThreadMode.SEPARATE_THREAD)
class LaneTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  private final SimulatedLoop sim = new SimulatedLoop();
  private final ScriptedSender downstream = new ScriptedSender();
  private final Map<String, FragmentOutcome> outcomes = new LinkedHashMap<>();
  private final List<String> events = new ArrayList<>();
  private Lanes lanes;

  private Lanes lanes(LaneSettings s) {
    lanes = new Lanes(List.of(sim.loop()), s, downstream, ALLOC, statesInto(events), null);
    return lanes;
  }

  private Fragment fragment(String id, String tenant, long deadlineFromNow) {
    return textFragment(id, tenant, id, sim.now() + deadlineFromNow, outcomes);
  }

  private void submit(Fragment... fragments) {
    lanes.submit(List.of(fragments));
    run();
  }

  /** Runs what is due now on the loop. */
  private void run() {
    sim.runDue();
  }

  private void advance(long millis) {
    sim.advance(Duration.ofMillis(millis));
  }

  @AfterEach
  void close() {
    LaneTesting.settleAndClose(lanes, sim);
  }

  @Test
  void deliversEachFragmentOfAnIdleLaneAtOnce() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    submit(fragment("a1", "a", 10 * SECOND), fragment("b1", "b", 10 * SECOND));
    assertEquals(Kind.DELIVERED, outcomes.get("a1").kind());
    assertEquals(Kind.DELIVERED, outcomes.get("b1").kind());
    assertEquals("a1", downstream.callsTo("a").get(0).text());
    assertEquals(1, outcomes.get("a1").attempts());
  }

  @Test
  void coalescesFragmentsThatArriveWhileTheLaneIsBusy() {
    lanes(settings(1, 1 << 20, 1 << 20, 5));
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(50)));
    submit(fragment("a1", "a", 10 * SECOND));
    submit(fragment("a2", "a", 10 * SECOND), fragment("a3", "a", 10 * SECOND));
    assertEquals(1, downstream.callsTo("a").size());
    assertTrue(outcomes.isEmpty());
    advance(50);
    List<ScriptedSender.Call> sent = downstream.callsTo("a");
    assertEquals(2, sent.size());
    assertEquals("a2a3", sent.get(1).text(), "one request carries both waiting fragments");
    assertEquals(3, outcomes.size());
    outcomes.values().forEach(o -> assertEquals(Kind.DELIVERED, o.kind()));
  }

  @Test
  void smallAndLargeFragmentsCoalescedKeepTheirOrderInOneRequest() {
    lanes(settings(1, 1 << 20, 1 << 20, 5));
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(50)));
    String large = "L".repeat(FragmentCompression.IN_LANE_BELOW);
    submit(fragment("a0", "a", 10 * SECOND));
    submit(fragment("a1", "a", 10 * SECOND));
    submit(fragment("a2", "a", 10 * SECOND));
    submit(fragment(large, "a", 10 * SECOND));
    submit(fragment("a3", "a", 10 * SECOND));
    submit(fragment(large + "2", "a", 10 * SECOND));
    advance(50);
    List<ScriptedSender.Call> sent = downstream.callsTo("a");
    assertEquals(2, sent.size());
    assertEquals("a1a2" + large + "a3" + large + "2", sent.get(1).text());
    assertEquals(6, outcomes.size());
    outcomes.values().forEach(o -> assertEquals(Kind.DELIVERED, o.kind()));
  }

  @Test
  void forwardedBodiesJoinTheOtherFragmentsBlockToBlock() {
    lanes(settings(1, 1 << 20, 1 << 20, 5));
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(50)));
    long deadline = sim.now() + 10 * SECOND;
    submit(forwardedFragment("f0", "a", "f0", deadline, outcomes));
    submit(fragment("a1", "a", 10 * SECOND));
    submit(forwardedFragment("f1", "a", "f1", deadline, outcomes));
    submit(forwardedFragment("f2", "a", "f2", deadline, outcomes));
    submit(fragment("a2", "a", 10 * SECOND));
    advance(50);
    List<ScriptedSender.Call> sent = downstream.callsTo("a");
    assertEquals(2, sent.size());
    assertEquals("f0", sent.get(0).text(), "a body forwarded alone is sent as it is");
    assertEquals("a1f1f2a2", sent.get(1).text(), "one request, in order");
    assertEquals(5, outcomes.size());
    outcomes.values().forEach(o -> assertEquals(Kind.DELIVERED, o.kind()));
  }

  @Test
  void fragmentsHandedToTheLoopBeforeItSendsTravelTogether() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    lanes.submit(List.of(fragment("a1", "a", 10 * SECOND)));
    lanes.submit(List.of(fragment("a2", "a", 10 * SECOND), fragment("b1", "b", 10 * SECOND)));
    run();
    assertEquals(
        1, downstream.callsTo("a").size(), "both sender requests in one downstream request");
    assertEquals("a1a2", downstream.callsTo("a").get(0).text());
    assertEquals("b1", downstream.callsTo("b").get(0).text());
    assertEquals(3, outcomes.size());
    outcomes.values().forEach(o -> assertEquals(Kind.DELIVERED, o.kind()));
  }

  @Test
  void whenEveryConnectionIsBusyALaneWaitsAndThenSendsAllItHoldsInOneRequest() {
    downstream.connections(1);
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(50)));
    submit(fragment("a1", "a", 10 * SECOND));
    submit(fragment("b1", "b", 10 * SECOND));
    submit(fragment("b2", "b", 10 * SECOND), fragment("c1", "c", 10 * SECOND));
    submit(fragment("b3", "b", 10 * SECOND));
    assertTrue(downstream.callsTo("b").isEmpty(), "no request queued behind the busy connection");
    advance(50);
    assertEquals(List.of("b1b2b3"), texts("b"), "waited, then sent everything at once");
    assertEquals(List.of("c1"), texts("c"), "lanes get the connection in the order they asked");
    assertEquals(5, outcomes.size());
    outcomes.values().forEach(o -> assertEquals(Kind.DELIVERED, o.kind()));
  }

  @Test
  void unprovenTenantsTogetherHoldAtMostHalfTheConnectionsAndProvenTenantsSendBesideThem() {
    downstream.connections(4);
    // Attempts of 5 s: a lane is proven by a request answered within 1.25 s.
    lanes(settings(1, 1 << 20, 1 << 20, 5));
    submit(fragment("h0", "healthy", 60 * SECOND), fragment("g0", "other", 60 * SECOND));
    assertEquals(Kind.DELIVERED, outcomes.get("h0").kind());
    assertEquals(Kind.DELIVERED, outcomes.get("g0").kind());
    for (int i = 0; i < 8; i++) {
      downstream.always("slow" + i, Reply.status(200).after(Duration.ofSeconds(2)));
    }
    // Nothing is known of these tenants yet: together they take two of the four connections.
    for (int i = 0; i < 8; i++) {
      submit(fragment("first" + i, "slow" + i, 60 * SECOND));
    }
    assertEquals(2, sentStartingWith("first"), "unproven lanes share half the connections");
    submit(fragment("h1", "healthy", 60 * SECOND), fragment("g1", "other", 60 * SECOND));
    assertEquals(Kind.DELIVERED, outcomes.get("h1").kind(), "sent at once beside them");
    assertEquals(Kind.DELIVERED, outcomes.get("g1").kind(), "sent at once beside them");
    advance(2000);
    assertEquals(4, sentStartingWith("first"), "two more as the first two answered");
    advance(6000);
    for (int i = 0; i < 8; i++) {
      assertEquals(Kind.DELIVERED, outcomes.get("first" + i).kind(), "held to half, not starved");
    }

    // Answered after 2 s, they stay unproven: still two at a time.
    for (int i = 0; i < 8; i++) {
      submit(fragment("second" + i, "slow" + i, 60 * SECOND));
    }
    assertEquals(2, sentStartingWith("second"), "slow lanes share half the connections");
    submit(fragment("h2", "healthy", 60 * SECOND));
    assertEquals(Kind.DELIVERED, outcomes.get("h2").kind(), "sent at once beside them");
    advance(8000);
    for (int i = 0; i < 8; i++) {
      assertEquals(Kind.DELIVERED, outcomes.get("second" + i).kind());
    }
    assertEquals(2 + 2, downstream.maxInFlight(), "never more than the loop's connections");
  }

  @Test
  void lanesAnsweredQuicklyAreProvenAndTakeEveryFreeConnection() {
    downstream.connections(4);
    lanes(settings(1, 1 << 20, 1 << 20, 5));
    for (String t : List.of("a", "b", "c", "d")) {
      downstream.script(t, Reply.status(200), Reply.status(200).after(Duration.ofSeconds(2)));
      submit(fragment(t + "0", t, 60 * SECOND));
      assertEquals(Kind.DELIVERED, outcomes.get(t + "0").kind());
    }
    for (String t : List.of("a", "b", "c", "d")) {
      submit(fragment(t + "1", t, 60 * SECOND));
    }
    assertEquals(8, downstream.calls().size(), "four proven lanes on the four connections at once");
    advance(2000);
    for (String t : List.of("a", "b", "c", "d")) {
      assertEquals(Kind.DELIVERED, outcomes.get(t + "1").kind());
    }
  }

  @Test
  void unprovenLanesTakeTheirTurnsBySenderSoOneSendersManyNewTenantsDoNotQueueAnothersAhead() {
    downstream.connections(2);
    lanes(settings(1, 1 << 20, 1 << 20, 5));
    for (int i = 0; i < 20; i++) {
      downstream.always("hung" + i, Reply.status(200).after(Duration.ofSeconds(5)));
    }
    // One sender's twenty new tenants, then another sender's two: one connection for unproven
    // lanes.
    for (int i = 0; i < 20; i++) {
      submit(fragmentOf("hung-sender", "h" + i, "hung" + i));
    }
    submit(fragmentOf("other-sender", "n0", "new0"), fragmentOf("other-sender", "n1", "new1"));
    assertEquals(1, downstream.calls().size(), "one unproven send at a time");
    advance(5000);
    advance(5000);
    List<String> sent = downstream.calls().stream().map(ScriptedSender.Call::text).toList();
    assertEquals(List.of("h0", "h1", "n0", "h2"), sent, "the senders take turns");
    assertEquals(Kind.DELIVERED, outcomes.get("n0").kind());
    advance(5000);
    assertEquals("n1", downstream.calls().get(4).text(), "not behind the eighteen others");
  }

  /** A fragment of {@code tenant} from {@code sender}'s request, answered into the outcomes. */
  private Fragment fragmentOf(String sender, String id, String tenant) {
    return LaneTesting.senderFragment(id, tenant, sender, sim.now() + 60 * SECOND, outcomes);
  }

  /** Downstream requests whose body starts with {@code prefix}. */
  private long sentStartingWith(String prefix) {
    return downstream.calls().stream().filter(c -> c.text().startsWith(prefix)).count();
  }

  @Test
  void fragmentsWaitingForAConnectionStillEndAtTheirDeadline() {
    downstream.connections(1);
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.always("slow", Reply.silence());
    submit(fragment("s1", "slow", 10 * SECOND));
    submit(fragment("b1", "b", SECOND));
    advance(1000);
    assertEquals(Kind.UNAVAILABLE, outcomes.get("b1").kind());
    assertEquals(0, outcomes.get("b1").attempts());
    assertTrue(downstream.callsTo("b").isEmpty());
  }

  @Test
  void aWaitingFragmentWithAnEarlierDeadlineThanTheOnesBeforeItEndsAtItsOwn() {
    downstream.connections(1);
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.always("slow", Reply.silence());
    submit(fragment("s1", "slow", 10 * SECOND));
    submit(fragment("b1", "b", 3 * SECOND));
    submit(fragment("b2", "b", SECOND));
    submit(fragment("b3", "b", 2 * SECOND));
    advance(999);
    assertTrue(outcomes.keySet().stream().noneMatch(id -> id.startsWith("b")));
    advance(1);
    assertEquals(Kind.UNAVAILABLE, outcomes.get("b2").kind(), "ended at its own deadline");
    assertFalse(outcomes.containsKey("b1"));
    assertFalse(outcomes.containsKey("b3"));
    advance(1000);
    assertEquals(Kind.UNAVAILABLE, outcomes.get("b3").kind());
    assertFalse(outcomes.containsKey("b1"));
    advance(1000);
    assertEquals(Kind.UNAVAILABLE, outcomes.get("b1").kind());
    assertTrue(downstream.callsTo("b").isEmpty());
  }

  private List<String> texts(String tenant) {
    return downstream.callsTo(tenant).stream().map(ScriptedSender.Call::text).toList();
  }

  @Test
  void coalescedRequestsStayWithinTheBatchSize() {
    lanes(settings(1, 1 << 20, 3, 5));
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(50)));
    submit(fragment("a1", "a", 10 * SECOND));
    submit(fragment("a2", "a", 10 * SECOND), fragment("a3", "a", 10 * SECOND));
    advance(50);
    List<ScriptedSender.Call> sent = downstream.callsTo("a");
    assertEquals(List.of("a1", "a2", "a3"), sent.stream().map(ScriptedSender.Call::text).toList());
  }

  @Test
  void aSecondConcurrentSendOpensOnlyAfterTheLinger() {
    lanes(settings(2, 1 << 20, 1 << 20, 5));
    downstream.always("a", Reply.status(200).after(Duration.ofMillis(100)));
    submit(fragment("a1", "a", 10 * SECOND));
    submit(fragment("a2", "a", 10 * SECOND));
    assertEquals(1, downstream.callsTo("a").size());
    advance(4);
    assertEquals(1, downstream.callsTo("a").size());
    advance(1);
    assertEquals(2, downstream.callsTo("a").size());
    assertEquals("a2", downstream.callsTo("a").get(1).text());
  }

  @Test
  void throttledTenantIsAnsweredAtOnceWithoutRetryWhenNoRetryAfterIsGiven() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.always("bad", Reply.status(429));
    submit(fragment("bad1", "bad", 10 * SECOND), fragment("ok1", "ok", 10 * SECOND));
    FragmentOutcome o = outcomes.get("bad1");
    assertEquals(Kind.THROTTLED, o.kind());
    assertEquals(429, o.status());
    assertEquals(1, o.attempts());
    assertEquals(-1, o.retryAfterMillis());
    assertEquals(Kind.DELIVERED, outcomes.get("ok1").kind());
    assertEquals(1, downstream.callsTo("bad").size(), "a 429 is not retried");
  }

  /**
   * Cortex answers 429 without {@code Retry-After}: the lane is throttled all the same, in its
   * state, metrics and log, until a send succeeds; new fragments are still sent, one by one.
   */
  @Test
  void a429WithoutRetryAfterThrottlesTheLaneUntilASendSucceeds() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.script("a", Reply.status(429), Reply.status(429));
    submit(fragment("a1", "a", 10 * SECOND));
    assertEquals(Kind.THROTTLED, outcomes.get("a1").kind());
    assertEquals(List.of("a THROTTLED"), events);
    submit(fragment("a2", "a", 10 * SECOND));
    assertEquals(Kind.THROTTLED, outcomes.get("a2").kind());
    assertEquals(1, outcomes.get("a2").attempts(), "sent, not answered from the lane's state");
    assertEquals(List.of("a THROTTLED", "a THROTTLED"), events);
    submit(fragment("a3", "a", 10 * SECOND));
    assertEquals(Kind.DELIVERED, outcomes.get("a3").kind());
    assertEquals(List.of("a THROTTLED", "a THROTTLED", "a HEALTHY"), events);
  }

  @Test
  void throttledWithRetryAfterRetriesOnceWhenItFitsAndAnswersNewFragmentsAtOnce() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.script(
        "a",
        Reply.retryAfter(429, Duration.ofMillis(1000)),
        Reply.retryAfter(429, Duration.ofMillis(1000)));
    submit(fragment("a1", "a", 10 * SECOND));
    assertTrue(outcomes.isEmpty(), "1 s fits well inside 10 s: retried");
    assertEquals(List.of("a THROTTLED"), events);
    submit(fragment("a2", "a", 10 * SECOND));
    FragmentOutcome fast = outcomes.get("a2");
    assertEquals(Kind.THROTTLED, fast.kind());
    assertEquals(0, fast.attempts(), "answered from the lane's state, not sent");
    assertTrue(fast.retryAfterMillis() > 0 && fast.retryAfterMillis() <= 1001);
    advance(1000);
    FragmentOutcome retried = outcomes.get("a1");
    assertEquals(Kind.THROTTLED, retried.kind(), "a 429 is retried at most once");
    assertEquals(2, retried.attempts());
    assertEquals(2, downstream.callsTo("a").size());
  }

  @Test
  void retryAfterLongerThanAQuarterOfTheDeadlineIsPassedToTheSender() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.script("a", Reply.retryAfter(429, Duration.ofMillis(3000)));
    submit(fragment("a1", "a", 10 * SECOND));
    assertEquals(Kind.THROTTLED, outcomes.get("a1").kind());
    assertEquals(3000, outcomes.get("a1").retryAfterMillis());
  }

  @Test
  void serverErrorBacksOffRetriesTheFailedSendAndFailsNewFragmentsFast() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.script("a", Reply.status(503), Reply.status(200));
    submit(fragment("a1", "a", 10 * SECOND));
    assertTrue(outcomes.isEmpty());
    assertEquals(List.of("a BACKING_OFF"), events);
    submit(fragment("a2", "a", 10 * SECOND), fragment("b1", "b", 10 * SECOND));
    FragmentOutcome fast = outcomes.get("a2");
    assertEquals(Kind.UNAVAILABLE, fast.kind());
    assertEquals(503, fast.status());
    assertTrue(fast.retryAfterMillis() > 0, "Retry-After from the backoff");
    assertTrue(
        fast.message().contains("backing off after downstream answered 503"), fast.message());
    assertEquals(Kind.DELIVERED, outcomes.get("b1").kind(), "another tenant is not affected");
    advance(100);
    assertEquals(Kind.DELIVERED, outcomes.get("a1").kind());
    assertEquals(2, outcomes.get("a1").attempts());
    assertEquals(List.of("a BACKING_OFF", "a HEALTHY"), events);
  }

  @Test
  void persistentServerErrorIsAnswered503BeforeTheDeadline() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.always("a", Reply.status(500));
    submit(fragment("a1", "a", 10 * SECOND));
    long elapsed = 0;
    while (!outcomes.containsKey("a1")) {
      advance(10);
      elapsed += 10;
      assertTrue(elapsed < 10_000, "answered before the deadline");
    }
    FragmentOutcome o = outcomes.get("a1");
    assertEquals(Kind.UNAVAILABLE, o.kind());
    assertEquals(500, o.status());
    assertTrue(o.retryAfterMillis() > 0);
    assertEquals(1 + Settlement.MAX_RETRIES, o.attempts());
    assertTrue(elapsed <= 400, "an outage is reported within the first backoffs, was " + elapsed);
  }

  @Test
  void slowTenantHoldsOnlyItsOwnFragmentsAndWaitingOnesEndAtTheirDeadline() {
    lanes(settings(2, 1 << 20, 1 << 20, 0));
    downstream.always("slow", Reply.silence());
    submit(fragment("s1", "slow", SECOND));
    submit(fragment("s2", "slow", SECOND));
    submit(fragment("s3", "slow", SECOND), fragment("ok1", "ok", SECOND));
    assertEquals(Kind.DELIVERED, outcomes.get("ok1").kind());
    assertEquals(2, downstream.callsTo("slow").size(), "the slow tenant uses only its own share");
    advance(999);
    assertFalse(outcomes.containsKey("s3"));
    advance(1);
    FragmentOutcome waited = outcomes.get("s3");
    assertEquals(Kind.UNAVAILABLE, waited.kind());
    assertEquals(0, waited.attempts());
    assertEquals(Kind.UNAVAILABLE, outcomes.get("s1").kind(), "attempt timed out at the deadline");
    assertEquals(
        SECOND, downstream.callsTo("slow").get(0).timeoutNanos(), "attempt bounded by deadline");
  }

  @Test
  void rejectionAnswersOnlyItsSendAndLeavesTheLaneHealthy() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.script("a", Reply.status(400, "scripted 400"));
    submit(fragment("a1", "a", 10 * SECOND));
    assertEquals(Kind.REJECTED, outcomes.get("a1").kind());
    assertEquals("downstream answered 400: scripted 400", outcomes.get("a1").message());
    submit(fragment("a2", "a", 10 * SECOND));
    assertEquals(Kind.DELIVERED, outcomes.get("a2").kind());
    assertTrue(events.isEmpty());
  }

  @Test
  void fullLaneAnswers503AtOnce() {
    lanes(settings(1, 3, 1 << 20, 5));
    downstream.always("a", Reply.status(200).after(Duration.ofMillis(100)));
    submit(fragment("a1", "a", 10 * SECOND));
    submit(fragment("a2", "a", 10 * SECOND));
    submit(fragment("a3", "a", 10 * SECOND));
    FragmentOutcome full = outcomes.get("a3");
    assertNotNull(full);
    assertEquals(Kind.UNAVAILABLE, full.kind());
    assertTrue(full.message().contains("lane is full"), full.message());
    advance(100);
    advance(100);
    assertEquals(Kind.DELIVERED, outcomes.get("a2").kind());
  }

  @Test
  void afterA429FragmentsAreSentOneByOneUntilASendSucceeds() {
    lanes(settings(1, 1 << 20, 1 << 20, 5));
    downstream.script(
        "a",
        Reply.status(429).after(Duration.ofMillis(50)),
        Reply.status(200),
        Reply.status(200),
        Reply.status(200));
    submit(fragment("a1", "a", 10 * SECOND));
    submit(fragment("a2", "a", 10 * SECOND), fragment("a3", "a", 10 * SECOND));
    advance(50);
    run();
    List<String> bodies = downstream.callsTo("a").stream().map(ScriptedSender.Call::text).toList();
    assertEquals(List.of("a1", "a2", "a3"), bodies);
  }

  @Test
  void idleLanesAreForgottenAndTheLaneCountIsBounded() {
    LaneSettings s =
        new LaneSettings(
            1,
            1 << 20,
            1 << 20,
            Duration.ofMillis(5),
            Duration.ofSeconds(10),
            2,
            Duration.ofMillis(100),
            Duration.ofSeconds(2),
            Duration.ofSeconds(5),
            LaneTesting.MAX_CONVERTED);
    lanes(s);
    downstream.always("busy1", Reply.silence()).always("busy2", Reply.silence());
    submit(fragment("x1", "busy1", 2 * SECOND), fragment("x2", "busy2", 2 * SECOND));
    assertEquals(2, lanes.size());
    submit(fragment("n1", "new", 60 * SECOND));
    assertEquals(Kind.UNAVAILABLE, outcomes.get("n1").kind(), "every lane busy: no room");
    assertTrue(outcomes.get("n1").message().contains("relay.lanes.max=2"));
    advance(2000);
    assertEquals(Kind.UNAVAILABLE, outcomes.get("x1").kind());
    advance(200);
    submit(fragment("n2", "new", 60 * SECOND));
    assertEquals(Kind.DELIVERED, outcomes.get("n2").kind(), "an idle lane made room");
    advance(20_000);
    assertEquals(0, lanes.size(), "idle lanes are forgotten");
  }

  @Test
  void outcomeOfEveryAttemptIsObservedWithItsFragmentCount() {
    List<String> attempts = new ArrayList<>();
    lanes =
        new Lanes(
            List.of(sim.loop()),
            settings(1, 1 << 20, 1 << 20, 5),
            downstream,
            ALLOC,
            new LaneObserver() {
              @Override
              public void attempt(String tenant, int fragments, AttemptOutcome o, long nanos) {
                attempts.add(tenant + ":" + fragments + ":" + o.status());
              }
            },
            null);
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(10)));
    submit(fragment("a1", "a", 10 * SECOND));
    submit(fragment("a2", "a", 10 * SECOND), fragment("a3", "a", 10 * SECOND));
    advance(10);
    assertEquals(List.of("a:1:200", "a:2:200"), attempts);
  }
}
