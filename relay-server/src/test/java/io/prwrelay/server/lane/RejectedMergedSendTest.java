package io.prwrelay.server.lane;

import static io.prwrelay.server.lane.LaneTesting.settings;
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
 * A coalesced downstream request rejected as a whole because one sender's batch is bad: the lane
 * sends its fragments again in halves until only the bad ones are rejected, on a simulated clock.
 * The scripted downstream rejects (400) every request whose body carries {@code BAD}, whatever else
 * it carries, and answers the others 200.
 */
@Timeout(value = 30, threadMode = ThreadMode.SEPARATE_THREAD)
class RejectedMergedSendTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
  private static final String MARKER = "BAD";
  private static final String REJECTION = "downstream answered 400: proto: unexpected end of group";

  private final SimulatedLoop sim = new SimulatedLoop();
  private final ScriptedSender downstream =
      new ScriptedSender()
          .whenBodyContains("a", MARKER, Reply.status(400, "proto: unexpected end of group"));
  private final Map<String, FragmentOutcome> outcomes = new LinkedHashMap<>();
  private final List<String> splitSends = new ArrayList<>();
  private Lanes lanes;

  private void lanes(LaneSettings s) {
    LaneObserver observer =
        new LaneObserver() {
          @Override
          public void splitSend(String tenant, int fragments) {
            splitSends.add(tenant + ":" + fragments);
          }
        };
    lanes = new Lanes(List.of(sim.loop()), s, downstream, ALLOC, observer, null);
  }

  /** Fragment {@code id} of tenant a whose bytes are {@code id}, due in 10 s. */
  private Fragment fragment(String id) {
    return fragment(id, 10 * SECOND);
  }

  private Fragment fragment(String id, long deadlineFromNow) {
    return textFragment(id, "a", id, sim.now() + deadlineFromNow, outcomes);
  }

  private void submit(List<Fragment> fragments) {
    lanes.submit(fragments);
    sim.runDue();
  }

  private void advance(long millis) {
    sim.advance(Duration.ofMillis(millis));
  }

  /** Keeps the lane busy with a0 for 50 ms, so that what comes next is coalesced. */
  private void busyFor50Ms() {
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(50)));
    submit(List.of(fragment("a0")));
  }

  private List<String> bodies() {
    return downstream.callsTo("a").stream().map(ScriptedSender.Call::text).toList();
  }

  /**
   * Asserts that every fragment but the bad ones was delivered, each in exactly one request the
   * downstream accepted, and every bad one rejected with the downstream's message.
   */
  private void onlyTheBadOnesRejected(List<String> ids) {
    assertEquals(ids.size() + 1, outcomes.size(), "every fragment answered: " + outcomes.keySet());
    for (String id : ids) {
      FragmentOutcome o = outcomes.get(id);
      if (id.contains(MARKER)) {
        assertEquals(Kind.REJECTED, o.kind(), id + ": " + o);
        assertEquals(400, o.status(), id);
        assertEquals(REJECTION, o.message(), id);
      } else {
        assertEquals(Kind.DELIVERED, o.kind(), id + ": " + o);
        long accepted =
            bodies().stream().filter(b -> !b.contains(MARKER) && b.contains(id)).count();
        assertEquals(1, accepted, id + " delivered once: " + bodies());
      }
    }
  }

  /** Ids f00 to f{n-1}, those at {@code bad} carrying the marker. */
  private static List<String> ids(int n, int... bad) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids.add(String.format("f%02d", i));
    }
    for (int b : bad) {
      ids.set(b, ids.get(b) + MARKER);
    }
    return ids;
  }

  private List<Fragment> fragments(List<String> ids) {
    List<Fragment> list = new ArrayList<>();
    for (String id : ids) {
      list.add(fragment(id));
    }
    return list;
  }

  @AfterEach
  void close() {
    LaneTesting.settleAndClose(lanes, sim);
    assertEquals(List.of(), downstream.releasedBodies());
  }

  @Test
  void twoCoalescedFragmentsOneBadTheGoodOneIsDeliveredAndTheBadOneRejected() {
    lanes(settings(1, 1 << 20, 1 << 20, 5));
    busyFor50Ms();
    submit(List.of(fragment("good"), fragment("bad" + MARKER)));
    advance(50);
    assertEquals(List.of("a0", "goodbad" + MARKER, "good", "bad" + MARKER), bodies());
    onlyTheBadOnesRejected(List.of("good", "bad" + MARKER));
    assertEquals(2, outcomes.get("good").attempts(), "the merged request and its own");
    assertEquals(List.of("a:1", "a:1"), splitSends);
  }

  @Test
  void oneBadFragmentAmongSixteenCostsTwoRequestsPerHalvingAndNoMoreThanTheLanesSends() {
    lanes(settings(2, 1 << 20, 1 << 20, 5));
    busyFor50Ms();
    List<String> ids = ids(16, 11);
    submit(fragments(ids));
    advance(50);
    onlyTheBadOnesRejected(ids);
    List<String> bodies = bodies();
    assertEquals(String.join("", ids), bodies.get(1), "all sixteen went together first");
    assertEquals(2 + 2 * 4, bodies.size(), "halves of 8, 4, 2 and 1: " + bodies);
    assertEquals(List.of("f00f01f02f03f04f05f06f07", "f08f09f10f11BADf12f13f14f15"), bodies(2, 4));
    assertTrue(downstream.maxInFlight() <= 2, "within max-concurrent-sends");
    assertEquals(8, splitSends.size());
  }

  @Test
  void twoBadFragmentsAmongTwelveAreBothFoundAndEveryOtherDeliveredOnce() {
    lanes(settings(4, 1 << 20, 1 << 20, 5));
    busyFor50Ms();
    List<String> ids = ids(12, 2, 9);
    submit(fragments(ids));
    advance(50);
    onlyTheBadOnesRejected(ids);
    assertTrue(downstream.maxInFlight() <= 4, "within max-concurrent-sends");
  }

  /**
   * Fragments that arrive while the lane splits wait behind the halves and are never merged with
   * them, so they do not go down with the bad one a second time.
   */
  @Test
  void fragmentsArrivingDuringASplitAreNotMergedWithItsHalves() {
    lanes(settings(1, 1 << 20, 1 << 20, 5));
    downstream.always("a", Reply.status(200).after(Duration.ofMillis(10)));
    busyFor50Ms();
    submit(List.of(fragment("g1"), fragment("x" + MARKER), fragment("g2")));
    advance(50); // the merged request is rejected at once; the first half goes, for 10 ms
    submit(List.of(fragment("late1")));
    submit(List.of(fragment("late2")));
    advance(100);
    onlyTheBadOnesRejected(List.of("g1", "x" + MARKER, "g2", "late1", "late2"));
    assertEquals(
        List.of("a0", "g1x" + MARKER + "g2", "g1", "x" + MARKER + "g2", "x" + MARKER, "g2"),
        bodies().subList(0, 6),
        "halves first, in order");
    assertEquals("late1late2", bodies().get(6), "the late ones coalesce among themselves");
  }

  /** A fragment of a half still ends at its own request's deadline while it waits for a send. */
  @Test
  void aFragmentWaitingInAHalfEndsAtItsOwnDeadline() {
    lanes(settings(1, 1 << 20, 1 << 20, 5));
    downstream.always("a", Reply.status(200).after(Duration.ofMillis(100)));
    busyFor50Ms();
    submit(List.of(fragment("g1"), fragment("short", 120 * 1_000_000L), fragment("bad" + MARKER)));
    advance(50); // rejected; the first half (g1) is out until 150 ms
    advance(69);
    assertFalse(outcomes.containsKey("short"));
    advance(1);
    assertEquals(Kind.UNAVAILABLE, outcomes.get("short").kind(), "ended at its deadline");
    assertEquals(1, outcomes.get("short").attempts(), "only the merged request carried it");
    advance(100);
    assertEquals(Kind.DELIVERED, outcomes.get("g1").kind());
    assertEquals(Kind.REJECTED, outcomes.get("bad" + MARKER).kind());
    assertEquals(REJECTION, outcomes.get("bad" + MARKER).message());
    assertEquals(List.of("a0", "g1shortbad" + MARKER, "g1", "bad" + MARKER), bodies());
  }

  @Test
  void aMergedSendRejectedWhileTheLaneShutsDownIsAnswered503ForItsSendersToRetry() {
    lanes(settings(1, 1 << 20, 1 << 20, 5));
    busyFor50Ms();
    downstream.whenBodyContains("a", "g1", Reply.status(400).after(Duration.ofMillis(20)));
    submit(List.of(fragment("g1"), fragment("g2")));
    advance(50); // the merged request goes out, rejected after 20 ms
    lanes.close();
    advance(20);
    for (String id : List.of("g1", "g2")) {
      assertEquals(Kind.UNAVAILABLE, outcomes.get(id).kind(), id);
      assertEquals(503, outcomes.get(id).status(), id);
      assertEquals("the relay is shutting down", outcomes.get(id).message(), id);
    }
    assertEquals(List.of("a0", "g1g2"), bodies(), "nothing sent after the shutdown");
    lanes = null;
  }

  private List<String> bodies(int from, int to) {
    return bodies().subList(from, to);
  }
}
