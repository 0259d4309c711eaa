package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Queue mode with direct delivery, over a real on-disk queue and a real event loop: a caught-up
 * tenant's fragments are delivered without touching the disk; a failure or a slow answer spills
 * them, in order, to the queue, and the lane goes direct again once its queue is drained; a late
 * 2xx of a spilled send is not delivered a second time; a 4xx is answered to the sender.
 */
class DirectQueueLaneTest extends QueueLanesFixture {
  /** Submits fragment {@code id} of tenant a and waits for its answer. */
  private FragmentOutcome answer(String id) throws InterruptedException {
    lanes.submit(List.of(fragment(id, "a")));
    await(id + " answered", () -> outcomes.containsKey(id));
    return outcomes.get(id);
  }

  /** True when the tenant's queue was never written: its directory is made by the first append. */
  private boolean nothingWrittenToDisk() throws Exception {
    try (Stream<Path> files = Files.list(dir.resolve("queue"))) {
      return files.noneMatch(Files::isDirectory);
    }
  }

  /**
   * Sends a1 and then, past the linger, a2 of tenant a as two direct sends answered {@code first}
   * and {@code second}, and asserts that both were answered queued (spilled).
   */
  private void twoSendsOutBothQueued(Reply first, Reply second) throws Exception {
    downstream.script("a", first, second);
    lanes.submit(List.of(fragment("a1", "a")));
    await("a1 out", () -> downstream.callsTo("a").size() == 1);
    Thread.sleep(20); // past the linger: a2 opens a second send
    lanes.submit(List.of(fragment("a2", "a")));
    await("answers", () -> outcomes.size() == 2);
    outcomes.forEach((id, o) -> assertEquals(Kind.QUEUED, o.kind(), id + ": " + o));
  }

  @Test
  void caughtUpTenantIsDeliveredDirectlyWithoutWritingToDisk() throws Exception {
    open(Duration.ofSeconds(1));
    lanes.submit(List.of(fragment("a1", "a"), fragment("b1", "b")));
    lanes.submit(List.of(fragment("a2", "a")));
    await("answers", () -> outcomes.size() == 3);
    outcomes.forEach((id, o) -> assertEquals(Kind.DELIVERED, o.kind(), id + ": " + o));
    assertEquals("a1a2", String.join("", bodiesOf("a")));
    assertTrue(nothingWrittenToDisk(), "no queue file for a delivered batch");
    assertEquals(List.of(), drained, "nothing went through the queue");
  }

  @Test
  void directTimeoutZeroSendsEverythingThroughTheQueue() throws Exception {
    open(Duration.ZERO);
    assertEquals(Kind.QUEUED, answer("a1").kind());
    await("delivered from the queue", () -> drained.contains("a:1:200"));
    assertFalse(nothingWrittenToDisk());
  }

  /**
   * A failed direct send goes to the queue ahead of what comes after it, the lane queues while the
   * backlog lasts, and once the queue is drained its fragments go directly again.
   */
  @ParameterizedTest
  @ValueSource(ints = {429, 500, 503})
  void failedDirectSendSpillsInOrderAndTheLaneGoesDirectAgainOnceDrained(int status)
      throws Exception {
    open(Duration.ofSeconds(1));
    downstream.script("a", Reply.status(status), Reply.status(status));
    FragmentOutcome a1 = answer("a1");
    assertEquals(Kind.QUEUED, a1.kind(), "answered once on disk: " + a1);
    assertEquals(Kind.QUEUED, answer("a2").kind(), "a backlog exists: queued, not sent");
    await("drained", () -> store.queue("a").isEmpty() && drained.size() == 2);
    List<String> bodies = bodiesOf("a");
    assertEquals(List.of("a1", "a1", "a1", "a2"), bodies, "a1 retried, then a2, never before it");

    // The lane sees its queue empty a moment after the test does: the next fragments go directly
    // once it has.
    int n = 3;
    while (answer("a" + n).kind() == Kind.QUEUED) {
      assertTrue(n < 100, "still queueing after the queue was drained");
      n++;
    }
    await("all delivered", () -> store.queue("a").isEmpty());
    StringBuilder expected = new StringBuilder("a1a1a1a2");
    for (int i = 3; i <= n; i++) {
      expected.append("a").append(i);
    }
    assertEquals(expected.toString(), String.join("", bodiesOf("a")), "each once, in order");
  }

  @Test
  void connectionErrorSpillsToTheQueue() throws Exception {
    open(Duration.ofSeconds(1));
    downstream.script("a", Reply.transport("connection refused"));
    assertEquals(Kind.QUEUED, answer("a1").kind());
    await("delivered from the queue", () -> drained.contains("a:1:200"));
    assertEquals(List.of("a1", "a1"), bodiesOf("a"));
  }

  /**
   * A send still unanswered after the direct timeout spills; its answer, a 2xx that came late,
   * acknowledges its record, so the queue does not deliver it a second time; what was queued
   * meanwhile goes after it.
   */
  @Test
  void slowDirectSendSpillsAndItsLate2xxAcknowledgesItsRecord() throws Exception {
    open(Duration.ofMillis(100));
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(600)));
    FragmentOutcome a1 = answer("a1");
    assertEquals(Kind.QUEUED, a1.kind(), "answered from the disk, not held for the downstream");
    assertEquals(1, downstream.callsTo("a").size(), "a1 is still out when answered");
    assertEquals(Kind.QUEUED, answer("a2").kind());
    await("drained", () -> store.queue("a").isEmpty() && drained.size() == 2);
    assertEquals(List.of("a1", "a2"), bodiesOf("a"), "a1 delivered once, a2 after it");
    assertEquals(List.of("a:1:200", "a:1:200"), drained);
  }

  /** A send that times out is spilled at the direct timeout and sent again from the queue. */
  @Test
  void directSendThatTimesOutIsSentAgainFromTheQueueBeforeLaterRecords() throws Exception {
    open(Duration.ofMillis(100));
    downstream.script("a", Reply.silence());
    assertEquals(Kind.QUEUED, answer("a1").kind());
    assertEquals(Kind.QUEUED, answer("a2").kind());
    await("drained", () -> store.queue("a").isEmpty() && drained.size() == 2);
    assertEquals(List.of("a1", "a1", "a2"), bodiesOf("a"));
  }

  /**
   * Two direct sends out when the first fails: both are queued in the order they went, and the
   * second one's 2xx cannot acknowledge its record while the first is queued, so it is sent again
   * with the first, after it (at-least-once).
   */
  @Test
  void aLaterSendsLate2xxDoesNotJumpAnEarlierFailedSend() throws Exception {
    open(Duration.ofSeconds(1));
    twoSendsOutBothQueued(
        Reply.status(503).after(Duration.ofMillis(100)),
        Reply.status(200).after(Duration.ofMillis(300)));
    await("drained", () -> store.queue("a").isEmpty() && !drained.isEmpty());
    // a2's 2xx makes the lane healthy again, so the two records travel together.
    assertEquals(List.of("a1", "a2", "a1a2"), bodiesOf("a"));
    assertEquals(List.of("a:2:200"), drained);
  }

  /**
   * Two slow direct sends spilled, the later one answered first: both were delivered, so neither is
   * sent again from the queue.
   */
  @Test
  void spilledSendsDeliveredOutOfOrderAreBothAcknowledged() throws Exception {
    open(Duration.ofMillis(100));
    twoSendsOutBothQueued(
        Reply.status(200).after(Duration.ofMillis(600)),
        Reply.status(200).after(Duration.ofMillis(300)));
    await("acknowledged", () -> !drained.isEmpty());
    assertEquals(List.of("a:2:200"), drained);
    assertTrue(store.queue("a").isEmpty());
    assertEquals(Kind.DELIVERED, answer("a3").kind(), "caught up: direct again");
    assertEquals(List.of("a1", "a2", "a3"), bodiesOf("a"), "nothing sent twice");
  }

  @Test
  void rejectedDirectSendIsAnsweredToTheSender() throws Exception {
    open(Duration.ofSeconds(1));
    downstream.script("a", Reply.status(400, "out of order sample"));
    FragmentOutcome a1 = answer("a1");
    assertEquals(Kind.REJECTED, a1.kind(), a1.toString());
    assertEquals(400, a1.status());
    assertTrue(a1.message().contains("out of order sample"), a1.message());
    assertTrue(nothingWrittenToDisk());
    assertEquals(Kind.DELIVERED, answer("a2").kind(), "the lane stays direct");
  }

  /**
   * A merged direct send rejected as a whole because of one bad fragment is sent again in halves:
   * the others are delivered, still without touching the disk, and only the bad one is rejected.
   */
  @Test
  void rejectedMergedDirectSendIsSplitSoThatOnlyTheBadFragmentIsRejected() throws Exception {
    open(Duration.ofSeconds(1));
    downstream.whenBodyContains("a", "BAD", Reply.status(400, "proto: unexpected end of group"));
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(300)));
    lanes.submit(List.of(fragment("a1", "a")));
    await("a1 out", () -> downstream.callsTo("a").size() == 1);
    lanes.submit(List.of(fragment("a2", "a"), fragment("a3BAD", "a"), fragment("a4", "a")));
    await("answers", () -> outcomes.size() == 4);
    assertEquals(List.of("a1", "a2a3BADa4", "a2", "a3BADa4", "a3BAD", "a4"), bodiesOf("a"));
    FragmentOutcome bad = outcomes.get("a3BAD");
    assertEquals(Kind.REJECTED, bad.kind(), bad.toString());
    assertEquals("downstream answered 400: proto: unexpected end of group", bad.message());
    for (String id : List.of("a1", "a2", "a4")) {
      assertEquals(Kind.DELIVERED, outcomes.get(id).kind(), id + ": " + outcomes.get(id));
    }
    assertTrue(nothingWrittenToDisk());
  }

  /**
   * A fragment that reaches the lane before the drain of the backlog has read it is queued behind
   * that backlog. The lane's loop is held while the lanes open and a2 is handed to it, so that the
   * lane takes a2 right after starting the drain, before the queue's I/O thread can answer the
   * read: a2 arriving after that answer would wait in memory behind the last record and go directly
   * after its 2xx, also in order, but not queued.
   */
  @Test
  void queuedRecordsAfterARestartAreDrainedBeforeNewFragmentsGoDirect() throws Exception {
    open(Duration.ofSeconds(1));
    downstream.always("a", Reply.status(503));
    assertEquals(Kind.QUEUED, answer("a1").kind());
    closeLanes();
    downstream.always("a", Reply.status(200));
    withLoopHeld(
        () -> {
          open(Duration.ofSeconds(1));
          lanes.submit(List.of(fragment("a2", "a")));
        });
    await(
        "drained",
        () ->
            outcomes.containsKey("a2")
                && store.queue("a").isEmpty()
                && String.join("", bodiesOf("a")).endsWith("a1a2"));
    assertEquals(Kind.QUEUED, outcomes.get("a2").kind(), "a backlog was there: a2 queued");
  }
}
