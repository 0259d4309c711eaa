package io.prwrelay.server.lane;

import static io.prwrelay.server.lane.LaneTesting.settings;
import static io.prwrelay.server.lane.LaneTesting.statesInto;
import static io.prwrelay.server.lane.LaneTesting.textFragment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
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
 * Lanes on two event loops (simulated, one clock): a large fragment routed on loop 0 whose tenant's
 * lane lives on loop 1 is sent from loop 0 once that lane said the tenant is healthy, and whatever
 * is not a 2xx or a plain rejection is decided by the lane. Fragments that arrive while such a send
 * is in flight travel together. The routing loop is loop 0: an embedded loop is always "in" its
 * loop, and the lanes take the first such loop as the caller's. Tenant {@code a} lives on loop 1.
 */
@Timeout(value = 30, threadMode = ThreadMode.SEPARATE_THREAD)
class RemoteSendTest {
  /**
   * The tenant of these tests: its lane lives on the second loop, the routing loop is the first.
   */
  private static final String A = LaneTesting.tenantOnLoop("a", 1, 2);

  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
  private static final String LARGE = "L".repeat(FragmentCompression.IN_LANE_BELOW);

  private final SimulatedLoop routing = new SimulatedLoop();
  private final SimulatedLoop home = new SimulatedLoop(routing);
  private final ScriptedSender downstream = new ScriptedSender();
  private final Map<String, FragmentOutcome> outcomes = new LinkedHashMap<>();
  private final List<String> events = new ArrayList<>();
  private Lanes lanes;

  private void lanes(LaneSettings s) {
    lanes =
        new Lanes(
            List.of(routing.loop(), home.loop()), s, downstream, ALLOC, statesInto(events), null);
  }

  private Fragment fragment(String id, String text) {
    return textFragment(id, A, text, routing.now() + 10 * SECOND, outcomes);
  }

  private Fragment large(String id) {
    return fragment(id, id + LARGE);
  }

  private void submit(Fragment f) {
    lanes.submit(List.of(f));
    SimulatedLoop.runDue(routing, home);
  }

  private void advance(long millis) {
    SimulatedLoop.advance(Duration.ofMillis(millis), routing, home);
  }

  /** Which loop sent each downstream request of tenant {@link #A}: "R" routing, "H" home. */
  private String sentFrom() {
    return LaneTesting.sentFrom(downstream, A, routing, home);
  }

  @AfterEach
  void close() {
    LaneTesting.settleAndClose(lanes, routing, home);
  }

  @Test
  void tenantAIsHomedOnTheSecondLoop() {
    assertEquals(1, Lanes.shardOf(A, 2));
  }

  @Test
  void largeFragmentsOfAHealthyTenantGoFromTheRoutingLoopOnceItsLaneSaysSo() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    submit(large("a1"));
    submit(large("a2"));
    submit(fragment("a3", "small"));
    submit(large("a4"));
    assertEquals("HRHR", sentFrom(), "the first and the small one go through the lane");
    assertEquals("a2" + LARGE, downstream.callsTo(A).get(1).text());
    for (String id : List.of("a1", "a2", "a3", "a4")) {
      assertEquals(Kind.DELIVERED, outcomes.get(id).kind(), id);
      assertEquals(1, outcomes.get(id).attempts(), id);
    }
  }

  @Test
  void aThrottledRemoteSendIsAnsweredByTheLaneWhichThenAnswersAtOnce() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    submit(large("a1"));
    downstream.script(A, Reply.retryAfter(429, Duration.ofSeconds(30)));
    submit(large("a2"));
    assertEquals(Kind.THROTTLED, outcomes.get("a2").kind());
    assertEquals(429, outcomes.get("a2").status());
    assertEquals(30_000, outcomes.get("a2").retryAfterMillis());
    assertEquals(List.of(A + " THROTTLED"), events);
    submit(large("a3"));
    assertEquals(Kind.THROTTLED, outcomes.get("a3").kind(), "answered by the lane at once");
    assertEquals("HR", sentFrom(), "no request for a3");
  }

  @Test
  void aRemoteSendThatFailsWith503IsRetriedByTheLaneAfterItsBackoff() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    submit(large("a1"));
    downstream.script(A, Reply.status(503));
    submit(large("a2"));
    assertFalse(outcomes.containsKey("a2"), "waits in the lane for its retry");
    assertEquals(List.of(A + " BACKING_OFF"), events);
    advance(1_000);
    assertEquals(Kind.DELIVERED, outcomes.get("a2").kind());
    assertEquals(2, outcomes.get("a2").attempts());
    assertEquals(List.of(A + " BACKING_OFF", A + " HEALTHY"), events);
    // The lane told the routing loop to stop when it backed off; healthy again, it tells it again.
    submit(large("a3"));
    submit(large("a4"));
    assertEquals("HRHHR", sentFrom());
    assertEquals(Kind.DELIVERED, outcomes.get("a4").kind());
  }

  @Test
  void aRejectedRemoteSendIsAnsweredThereAndLeavesTheLaneHealthy() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    submit(large("a1"));
    downstream.script(A, Reply.status(400, "out of order sample"));
    submit(large("a2"));
    assertEquals(Kind.REJECTED, outcomes.get("a2").kind());
    assertEquals(400, outcomes.get("a2").status());
    assertTrue(outcomes.get("a2").message().contains("out of order sample"));
    submit(large("a3"));
    assertEquals(Kind.DELIVERED, outcomes.get("a3").kind());
    assertEquals("HRR", sentFrom());
    assertTrue(events.isEmpty());
  }

  /**
   * A request the routing loop merged and the downstream rejected as a whole goes to the lane,
   * which sends it again in halves: only the bad fragment is rejected, and the routing loop, whose
   * tenant is not failing, keeps sending.
   */
  @Test
  void aMergedRemoteSendRejectedAsAWholeIsSplitByTheLaneSoThatOnlyTheBadFragmentIsRejected() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.whenBodyContains(A, "BAD", Reply.status(400, "proto: unexpected end of group"));
    downstream.always(A, Reply.status(200).after(Duration.ofMillis(50)));
    submit(large("a1"));
    submit(large("a2"));
    submit(large("a3"));
    submit(fragment("a4", "a4BAD" + LARGE));
    advance(5); // the linger: a3 and a4 go together from the routing loop, rejected at once
    assertEquals("HRRHH", sentFrom(), "the lane sent each half");
    assertEquals("a3" + LARGE + "a4BAD" + LARGE, downstream.callsTo(A).get(2).text());
    assertEquals("a3" + LARGE, downstream.callsTo(A).get(3).text());
    assertEquals(Kind.REJECTED, outcomes.get("a4").kind());
    assertEquals(
        "downstream answered 400: proto: unexpected end of group", outcomes.get("a4").message());
    advance(100);
    assertEquals(Kind.DELIVERED, outcomes.get("a3").kind());
    assertEquals(2, outcomes.get("a3").attempts());
    submit(large("a5"));
    assertEquals("HRRHHR", sentFrom(), "the routing loop still sends for the tenant");
    advance(100);
    for (String id : List.of("a1", "a2", "a5")) {
      assertEquals(Kind.DELIVERED, outcomes.get(id).kind(), id);
    }
    assertTrue(events.isEmpty(), "the lane stays healthy");
  }

  @Test
  void sendsOfATenantFromTheRoutingLoopAreBoundedByItsShare() {
    lanes(settings(1, 1 << 20, 1 << 20, 5));
    submit(large("a1"));
    downstream.always(A, Reply.status(200).after(Duration.ofMillis(50)));
    submit(large("a2"));
    submit(large("a3"));
    assertEquals("HRH", sentFrom(), "a3 waits for neither: its lane sends it");
    advance(50);
    assertEquals(3, outcomes.size());
    outcomes.values().forEach(o -> assertEquals(Kind.DELIVERED, o.kind()));
  }

  @Test
  void theRoutingLoopKeepsAShareOfItsConnectionsForItsOwnLanes() {
    downstream.connections(5);
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.always(A, Reply.status(200).after(Duration.ofMillis(50)));
    submit(large("a1"));
    submit(large("a2"));
    submit(large("a3"));
    advance(10); // the routing loop's linger hands a3 to the lane, which lingers too (a1 is out)
    assertEquals("HRH", sentFrom(), "a second send from there would leave 3 of 5 connections");
    advance(100);
    assertEquals(3, outcomes.size());
    outcomes.values().forEach(o -> assertEquals(Kind.DELIVERED, o.kind()));
  }

  @Test
  void aLoopWithNoMoreConnectionsThanATenantsShareSendsOnlyForItsOwnLanes() {
    downstream.connections(4);
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    submit(large("a1"));
    submit(large("a2"));
    assertEquals("HH", sentFrom());
  }

  @Test
  void fragmentsArrivingWhileASendIsInFlightTravelTogetherFromTheRoutingLoop() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.always(A, Reply.status(200).after(Duration.ofMillis(50)));
    submit(large("a1"));
    submit(large("a2"));
    submit(large("a3"));
    submit(large("a4"));
    assertEquals("HR", sentFrom(), "a3 and a4 wait for the linger");
    advance(5);
    assertEquals("HRR", sentFrom());
    assertEquals("a3" + LARGE + "a4" + LARGE, downstream.callsTo(A).get(2).text());
    advance(100);
    assertEquals(4, outcomes.size());
    outcomes.values().forEach(o -> assertEquals(Kind.DELIVERED, o.kind()));
    outcomes.values().forEach(o -> assertEquals(1, o.attempts()));
  }

  @Test
  void fragmentsOfTwoReplicasLeaveTheRoutingLoopInRequestsOfTheirOwn() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.always(A, Reply.status(200).after(Duration.ofMillis(50)));
    long deadline = routing.now() + 10 * SECOND;
    int size = FragmentCompression.IN_LANE_BELOW;
    submit(HaPairs.large("p1", A, "prod", "r1", size, deadline, outcomes));
    submit(HaPairs.large("p2", A, "prod", "r1", size, deadline, outcomes));
    submit(HaPairs.large("s1", A, "prod", "r2", size, deadline, outcomes));
    submit(HaPairs.large("p3", A, "prod", "r1", size, deadline, outcomes));
    submit(HaPairs.large("s2", A, "prod", "r2", size, deadline, outcomes));
    assertEquals("HR", sentFrom(), "the others wait for the linger");
    advance(5);
    advance(5);
    assertEquals("HRRR", sentFrom());
    assertEquals(
        List.of(List.of("r1:p1"), List.of("r1:p2"), List.of("r2:s1", "r2:s2"), List.of("r1:p3")),
        HaPairs.requests(downstream, A),
        "one replica per request, each replica's fragments in order");
    advance(100);
    assertEquals(5, outcomes.size());
    outcomes.forEach((id, o) -> assertEquals(Kind.DELIVERED, o.kind(), id));
  }

  @Test
  void aLingerThatBeginsAfterASendEndedAnEarlierOneLastsItsFullLinger() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.script(
        A,
        Reply.status(200),
        Reply.status(200).after(Duration.ofMillis(2)),
        Reply.status(200).after(Duration.ofMillis(50)),
        Reply.status(200));
    submit(large("a1"));
    submit(large("a2"));
    submit(large("a3")); // a2 in flight: a3 lingers until 5 ms
    advance(2);
    assertEquals("HRR", sentFrom(), "a2's answer sent a3 before its linger ended");
    advance(1);
    submit(large("a4")); // a3 in flight: a4 lingers until 8 ms
    advance(2);
    assertEquals("HRR", sentFrom(), "a4 still waits when a3's linger would have ended");
    advance(2);
    assertEquals("HRR", sentFrom());
    advance(1);
    assertEquals("HRRR", sentFrom(), "a4 goes when its own linger ends");
    advance(100);
    assertEquals(4, outcomes.size());
    outcomes.values().forEach(o -> assertEquals(Kind.DELIVERED, o.kind()));
  }

  @Test
  void aFailedRemoteSendTakesTheFragmentsWaitingBehindItToTheLane() {
    lanes(settings(4, 1 << 20, 1 << 20, 20));
    downstream.script(
        A, Reply.status(200), Reply.status(503).after(Duration.ofMillis(10)), Reply.status(200));
    submit(large("a1"));
    submit(large("a2"));
    submit(large("a3"));
    advance(10);
    assertEquals("HR", sentFrom(), "a3 waited for a2, and a2 failed");
    assertEquals(List.of(A + " BACKING_OFF"), events);
    assertEquals(1, outcomes.size());
    advance(1_000);
    assertEquals("HRH", sentFrom(), "the lane retries a2 with a3 after its backoff");
    assertEquals("a2" + LARGE + "a3" + LARGE, downstream.callsTo(A).get(2).text());
    assertEquals(Kind.DELIVERED, outcomes.get("a2").kind());
    assertEquals(2, outcomes.get("a2").attempts());
    assertEquals(Kind.DELIVERED, outcomes.get("a3").kind());
    assertEquals(1, outcomes.get("a3").attempts());
  }

  @Test
  void aLateFailureOfAnEndedDelegateDoesNotKeepItsSuccessorSendingThroughABackoff() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    downstream.script(
        A,
        Reply.status(200),
        Reply.status(503).after(Duration.ofMillis(10)),
        Reply.status(503).after(Duration.ofMillis(500)));
    submit(large("a1"));
    submit(large("a2"));
    submit(large("a3"));
    advance(10); // a3 went after the linger; a2 fails and ends the routing loop's delegate
    advance(290); // the lane's retry of a2 succeeds: healthy again
    submit(large("a4"));
    submit(large("a5"));
    assertEquals("HRRHHR", sentFrom(), "a5 goes from the routing loop again");
    advance(205); // a3 fails: the lane backs off and takes the new delegate back
    assertEquals(List.of(A + " BACKING_OFF", A + " HEALTHY", A + " BACKING_OFF"), events);
    submit(large("a6"));
    assertEquals(Kind.UNAVAILABLE, outcomes.get("a6").kind(), "answered by the backing-off lane");
    assertEquals("HRRHHR", sentFrom());
  }

  /**
   * A 429 without {@code Retry-After} to a send from the routing loop throttles the lane without
   * holding anything back (the fragment is answered 429, the lane is throttled until a send
   * succeeds), and it ended that loop's delegate: the lane forgets that it allowed the loop, so the
   * next large fragments go through the lane; once it is healthy again, it allows the loop again.
   */
  @Test
  void aRemoteSendThrottledWithoutRetryAfterEndsTheDelegateUntilTheLaneAllowsItAgain() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    submit(large("a1"));
    downstream.script(A, Reply.status(429));
    submit(large("a2"));
    assertEquals(Kind.THROTTLED, outcomes.get("a2").kind());
    assertEquals(List.of(A + " THROTTLED"), events, "no Retry-After: throttled, nothing held back");
    submit(large("a3"));
    assertEquals(List.of(A + " THROTTLED", A + " HEALTHY"), events, "a3 delivered: healthy again");
    submit(large("a4"));
    submit(large("a5"));
    assertEquals(
        "HRHHR",
        sentFrom(),
        "a3 through the throttled lane, which does not allow the routing loop; a4 through the"
            + " healthy lane, which does; a5 from the routing loop");
    for (String id : List.of("a1", "a3", "a4", "a5")) {
      assertEquals(Kind.DELIVERED, outcomes.get(id).kind(), id);
    }
  }

  @Test
  void aForgottenLaneStopsTheRoutingLoopSendingForIt() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    submit(large("a1"));
    submit(large("a2"));
    advance(6 * 60_000); // the idle timeout of the test settings is 5 minutes
    assertEquals(0, lanes.size());
    submit(large("a3"));
    submit(large("a4"));
    assertEquals("HRHR", sentFrom());
  }
}
