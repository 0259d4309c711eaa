package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Queue mode with direct delivery, in simulated time over the in-memory queue: a caught-up tenant's
 * fragments are delivered without touching the queue; a failure or a slow answer spills them, in
 * order, to the queue, and the lane goes direct again once its queue is drained; a late 2xx of a
 * spilled send is not delivered a second time; a 4xx is answered to the sender; after a restart the
 * backlog goes first, and what arrives while its last record is out waits for it (and is queued
 * behind it if that send fails). The same on the real disk, where the files matter: {@link
 * QueueLaneOnDiskTest}.
 */
class DirectQueueLaneTest extends SimulatedQueueLanesFixture {
  /**
   * Sends a1 and then, past the linger, a2 of tenant a as two direct sends answered {@code first}
   * and {@code second}, and asserts that both were answered queued (spilled).
   */
  private void twoSendsOutBothQueued(Reply first, Reply second) {
    downstream.script("a", first, second);
    submit(fragment("a1", "a"));
    assertEquals(1, downstream.callsTo("a").size(), "a1 out");
    advance(20); // past the linger: a2 opens a second send
    submit(fragment("a2", "a"));
    advanceUntil("answers", () -> outcomes.size() == 2);
    outcomes.forEach((id, o) -> assertEquals(Kind.QUEUED, o.kind(), id + ": " + o));
  }

  /** Tenant a's queue holds a1, and the lanes are opened again over it, as after a restart. */
  private void restartedWithA1Queued() {
    open(Duration.ofSeconds(1));
    downstream.always("a", Reply.status(503));
    assertEquals(Kind.QUEUED, answer("a1").kind());
    closeLanes();
    downstream.always("a", Reply.status(200));
    open(Duration.ofSeconds(1));
  }

  @Test
  void caughtUpTenantIsDeliveredDirectlyWithoutWritingToTheQueue() {
    open(Duration.ofSeconds(1));
    lanes.submit(List.of(fragment("a1", "a"), fragment("b1", "b")));
    lanes.submit(List.of(fragment("a2", "a")));
    sim.runDue();
    assertEquals(3, outcomes.size());
    outcomes.forEach((id, o) -> assertEquals(Kind.DELIVERED, o.kind(), id + ": " + o));
    assertEquals("a1a2", String.join("", bodiesOf("a")));
    assertEquals(0, queues.appended(), "nothing queued for a delivered batch");
    assertEquals(List.of(), drained, "nothing went through the queue");
  }

  @Test
  void directTimeoutZeroSendsEverythingThroughTheQueue() {
    open(Duration.ZERO);
    assertEquals(Kind.QUEUED, answer("a1").kind());
    assertEquals(List.of("a:1:200"), drained, "delivered from the queue");
    assertEquals(1, queues.appended());
  }

  /**
   * A failed direct send goes to the queue ahead of what comes after it, the lane queues while the
   * backlog lasts (throttled after a 429, backing off after a 5xx), and once the queue is drained
   * its fragments go directly again.
   */
  @ParameterizedTest
  @ValueSource(ints = {429, 500, 503})
  void failedDirectSendSpillsInOrderAndTheLaneGoesDirectAgainOnceDrained(int status) {
    open(Duration.ofSeconds(1));
    downstream.script("a", Reply.status(status), Reply.status(status));
    FragmentOutcome a1 = answer("a1");
    assertEquals(Kind.QUEUED, a1.kind(), "answered once stored: " + a1);
    assertEquals(List.of(status == 429 ? "a THROTTLED" : "a BACKING_OFF"), states);
    assertEquals(Kind.QUEUED, answer("a2").kind(), "a backlog exists: queued, not sent");
    advanceUntil("drained", () -> queue("a").isEmpty() && drained.size() == 2);
    List<String> bodies = bodiesOf("a");
    assertEquals(List.of("a1", "a1", "a1", "a2"), bodies, "a1 retried, then a2, never before it");
    assertEquals(Kind.DELIVERED, answer("a3").kind(), "direct again once drained");
    assertTrue(queue("a").isEmpty());
    assertEquals("a1a1a1a2a3", String.join("", bodiesOf("a")), "each once, in order");
  }

  @Test
  void connectionErrorSpillsToTheQueue() {
    open(Duration.ofSeconds(1));
    downstream.script("a", Reply.transport("connection refused"));
    assertEquals(Kind.QUEUED, answer("a1").kind());
    advanceUntil("delivered from the queue", () -> drained.contains("a:1:200"));
    assertEquals(List.of("a1", "a1"), bodiesOf("a"));
  }

  /**
   * A send still unanswered after the direct timeout spills; its answer, a 2xx that came late,
   * acknowledges its record, so the queue does not deliver it a second time; what was queued
   * meanwhile goes after it.
   */
  @Test
  void slowDirectSendSpillsAndItsLate2xxAcknowledgesItsRecord() {
    open(Duration.ofMillis(100));
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(600)));
    FragmentOutcome a1 = answer("a1");
    assertEquals(Kind.QUEUED, a1.kind(), "answered from the queue, not held for the downstream");
    assertEquals(100, nowMillis(), "answered at the direct timeout");
    assertEquals(1, downstream.callsTo("a").size(), "a1 is still out when answered");
    assertEquals(Kind.QUEUED, answer("a2").kind());
    advanceUntil("drained", () -> queue("a").isEmpty() && drained.size() == 2);
    assertEquals(List.of("a1", "a2"), bodiesOf("a"), "a1 delivered once, a2 after it");
    assertEquals(List.of("a:1:200", "a:1:200"), drained);
  }

  /** A send that times out is spilled at the direct timeout and sent again from the queue. */
  @Test
  void directSendThatTimesOutIsSentAgainFromTheQueueBeforeLaterRecords() {
    open(Duration.ofMillis(100));
    downstream.script("a", Reply.silence());
    assertEquals(Kind.QUEUED, answer("a1").kind());
    assertEquals(Kind.QUEUED, answer("a2").kind());
    advanceUntil("drained", () -> queue("a").isEmpty() && drained.size() == 2);
    assertEquals(List.of("a1", "a1", "a2"), bodiesOf("a"));
  }

  /**
   * Two direct sends out when the first fails: both are queued in the order they went, and the
   * second one's 2xx cannot acknowledge its record while the first is queued, so it is sent again
   * with the first, after it (at-least-once).
   */
  @Test
  void aLaterSendsLate2xxDoesNotJumpAnEarlierFailedSend() {
    open(Duration.ofSeconds(1));
    twoSendsOutBothQueued(
        Reply.status(503).after(Duration.ofMillis(100)),
        Reply.status(200).after(Duration.ofMillis(300)));
    advanceUntil("drained", () -> queue("a").isEmpty() && !drained.isEmpty());
    // a2's 2xx makes the lane healthy again, so the two records travel together.
    assertEquals(List.of("a1", "a2", "a1a2"), bodiesOf("a"));
    assertEquals(List.of("a:2:200"), drained);
  }

  /**
   * Two slow direct sends spilled, the later one answered first: both were delivered, so neither is
   * sent again from the queue.
   */
  @Test
  void spilledSendsDeliveredOutOfOrderAreBothAcknowledged() {
    open(Duration.ofMillis(100));
    twoSendsOutBothQueued(
        Reply.status(200).after(Duration.ofMillis(600)),
        Reply.status(200).after(Duration.ofMillis(300)));
    advanceUntil("acknowledged", () -> !drained.isEmpty());
    assertEquals(List.of("a:2:200"), drained);
    assertTrue(queue("a").isEmpty());
    assertEquals(Kind.DELIVERED, answer("a3").kind(), "caught up: direct again");
    assertEquals(List.of("a1", "a2", "a3"), bodiesOf("a"), "nothing sent twice");
  }

  @Test
  void rejectedDirectSendIsAnsweredToTheSender() {
    open(Duration.ofSeconds(1));
    downstream.script("a", Reply.status(400, "out of order sample"));
    FragmentOutcome a1 = answer("a1");
    assertEquals(Kind.REJECTED, a1.kind(), a1.toString());
    assertEquals(400, a1.status());
    assertTrue(a1.message().contains("out of order sample"), a1.message());
    assertEquals(0, queues.appended());
    assertEquals(Kind.DELIVERED, answer("a2").kind(), "the lane stays direct");
  }

  /**
   * A merged direct send rejected as a whole because of one bad fragment is sent again in halves:
   * the others are delivered, still without touching the queue, and only the bad one is rejected.
   */
  @Test
  void rejectedMergedDirectSendIsSplitSoThatOnlyTheBadFragmentIsRejected() {
    open(Duration.ofSeconds(1));
    downstream.whenBodyContains("a", "BAD", Reply.status(400, "proto: unexpected end of group"));
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(300)));
    submit(fragment("a1", "a"));
    assertEquals(1, downstream.callsTo("a").size(), "a1 out");
    submit(fragment("a2", "a"), fragment("a3BAD", "a"), fragment("a4", "a"));
    advanceUntil("answers", () -> outcomes.size() == 4);
    assertEquals(List.of("a1", "a2a3BADa4", "a2", "a3BADa4", "a3BAD", "a4"), bodiesOf("a"));
    FragmentOutcome bad = outcomes.get("a3BAD");
    assertEquals(Kind.REJECTED, bad.kind(), bad.toString());
    assertEquals("downstream answered 400: proto: unexpected end of group", bad.message());
    for (String id : List.of("a1", "a2", "a4")) {
      assertEquals(Kind.DELIVERED, outcomes.get(id).kind(), id + ": " + outcomes.get(id));
    }
    assertEquals(0, queues.appended());
  }

  /**
   * After a restart the lane drains its backlog first: a fragment that reaches it after the drain
   * started but before the queue answered the drain's read (the interleaving that, on the real disk
   * and loop, the test thread could not choose) is queued behind the backlog.
   */
  @Test
  void queuedRecordsAfterARestartAreDrainedBeforeNewFragmentsGoDirect() {
    restartedWithA1Queued();
    // Behind the lane's resume on the loop, ahead of the queue's answer to its read.
    sim.loop().execute(() -> lanes.submit(List.of(fragment("a2", "a"))));
    sim.runDue();
    assertEquals(Kind.QUEUED, outcomes.get("a2").kind(), "a backlog was there: a2 queued");
    assertTrue(queue("a").isEmpty());
    assertEquals(List.of("a1", "a1", "a2"), bodiesOf("a"), "the backlog first");
  }

  /**
   * A fragment that arrives while the drain's send carries the last queued record waits in memory
   * for that send, not in the queue (under a steady flow the queue would never be empty), and goes
   * directly once the 2xx came: after the backlog, never before it.
   */
  @Test
  void aFragmentArrivingWhileTheLastQueuedRecordIsOutWaitsForItAndThenGoesDirect() {
    restartedWithA1Queued();
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(500)));
    sim.runDue();
    assertEquals(2, downstream.callsTo("a").size(), "the drain of a1 is out");
    submit(fragment("a2", "a"));
    advance(499);
    assertFalse(outcomes.containsKey("a2"), "waits for the backlog's last send");
    assertEquals(2, downstream.callsTo("a").size());
    advance(1);
    assertEquals(Kind.DELIVERED, outcomes.get("a2").kind());
    assertEquals(List.of("a1", "a1", "a2"), bodiesOf("a"));
    assertEquals(1, queue("a").appended(), "a2 never went to the queue");
    assertTrue(queue("a").isEmpty());
  }

  /**
   * When the drain's send carrying the last queued record fails, the fragments that waited in
   * memory for it are queued behind its record at once (answered then, not at their spill time) and
   * the lane queues until the backlog is drained.
   */
  @Test
  void aFailedDrainQueuesTheFragmentsWaitingForItBehindItsRecord() {
    restartedWithA1Queued();
    downstream.script("a", Reply.status(503).after(Duration.ofMillis(100)));
    sim.runDue();
    submit(fragment("a2", "a"));
    assertFalse(outcomes.containsKey("a2"), "waits in memory for the drain of a1");
    advance(100);
    assertTrue(outcomes.containsKey("a2"), "answered when the drain failed");
    assertEquals(Kind.QUEUED, outcomes.get("a2").kind());
    assertEquals(2, queue("a").records(), "a2 behind a1");
    assertEquals(List.of("a BACKING_OFF"), states.subList(states.size() - 1, states.size()));
    advanceUntil("drained", () -> queue("a").isEmpty());
    assertEquals(List.of("a1", "a1", "a1", "a2"), bodiesOf("a"), "a1 again, then a2");
  }
}
