package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lanes in queue mode with every fragment going through the queue (direct timeout zero), in
 * simulated time over the in-memory queue: a fragment is answered once it is stored, each lane
 * drains its own queue in order, a failing tenant keeps its records while others flow, a 429
 * throttles the lane and a 5xx backs it off, and a restart resumes what was queued. What depends on
 * the files themselves: {@link QueueLaneOnDiskTest}.
 */
class QueueLaneTest extends SimulatedQueueLanesFixture {
  private Lanes open() {
    return open(Duration.ZERO);
  }

  /**
   * Opens the lanes with tenant a's downstream always answering {@code status}, submits fragments
   * a1 to a{@code count} of tenant a at once and runs the loop until each is answered.
   */
  private void queuedWhileAAnswers(int status, int count) {
    open();
    downstream.always("a", Reply.status(status));
    List<Fragment> fragments = new ArrayList<>();
    for (int i = 1; i <= count; i++) {
      fragments.add(fragment("a" + i, "a"));
    }
    submit(fragments.toArray(new Fragment[0]));
    assertEquals(count, outcomes.size(), "answered once stored");
  }

  /** The pooled allocator, out of memory for the queue drain's join of records while told so. */
  private static final class JoinOutOfMemory extends AbstractByteBufAllocator {
    volatile boolean failing = true;

    JoinOutOfMemory() {
      super(false);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      check();
      return QueueLanesFixture.ALLOC.heapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      check();
      return QueueLanesFixture.ALLOC.directBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public boolean isDirectBufferPooled() {
      return true;
    }

    private void check() {
      boolean joining =
          StackWalker.getInstance()
              .walk(
                  frames ->
                      frames.anyMatch(
                          f ->
                              f.getClassName().equals(SnappyCodec.class.getName())
                                  && f.getMethodName().equals("concat")));
      if (failing && joining) {
        throw new OutOfMemoryError("Cannot reserve direct buffer memory (test)");
      }
    }
  }

  /**
   * Memory running out while the drain joins queued records drops nothing and leaks nothing (the
   * fixture's paranoid leak detection): the lane backs off, and once memory is back the records are
   * delivered, once.
   */
  @Test
  void memoryRunningOutWhileJoiningQueuedRecordsBacksOffAndLosesNothing() {
    JoinOutOfMemory scarce = new JoinOutOfMemory();
    alloc = scarce;
    open();
    downstream.always("a", Reply.status(200));
    submit(fragment("a1", "a"), fragment("a2", "a"));
    assertEquals(Kind.QUEUED, outcomes.get("a1").kind());
    assertEquals(Kind.QUEUED, outcomes.get("a2").kind());
    assertEquals(List.of(), downstream.callsTo("a"), "nothing sent without memory");
    assertEquals(List.of("a BACKING_OFF"), states);
    assertEquals(2, queue("a").records(), "nothing dropped");
    scarce.failing = false;
    advance(2_000);
    assertEquals(List.of("a1a2"), bodiesOf("a"));
    assertEquals(List.of("a:2:200"), drained);
    assertTrue(queue("a").isEmpty());
  }

  @Test
  void fragmentIsAnsweredOnceStoredAndThenDeliveredInOrder() {
    open();
    lanes.submit(List.of(fragment("a1", "a"), fragment("a2", "a"), fragment("a3", "a")));
    assertTrue(outcomes.isEmpty(), "not answered before the queue has stored them");
    sim.runDue();
    assertEquals(3, outcomes.size());
    outcomes.values().forEach(o -> assertEquals(Kind.QUEUED, o.kind()));
    assertEquals("a1a2a3", String.join("", bodiesOf("a")));
    assertEquals(0, queue("a").records(), "queue drained");
  }

  @Test
  void failingTenantKeepsItsRecordsWhileOthersFlowAndCatchesUpMerged() {
    open();
    downstream.always("bad", Reply.status(503));
    submit(fragment("b1", "bad"), fragment("ok1", "ok"));
    submit(fragment("b2", "bad"), fragment("ok2", "ok"));
    submit(fragment("b3", "bad"));
    assertEquals(5, outcomes.size());
    outcomes.values().forEach(o -> assertEquals(Kind.QUEUED, o.kind()));
    assertEquals("ok1ok2", String.join("", bodiesOf("ok")), "healthy tenant delivered");
    advance(1_000);
    assertTrue(downstream.callsTo("bad").size() >= 3, "bad tenant retried");
    assertEquals(3, queue("bad").records(), "nothing acknowledged while failing");
    downstream.always("bad", Reply.status(200));
    advance(1_000);
    assertTrue(queue("bad").isEmpty(), "bad tenant caught up");
    List<ScriptedSender.Call> sent = downstream.callsTo("bad");
    assertEquals("b1", sent.get(sent.size() - 2).text(), "the first success carries one record");
    assertEquals("b2b3", sent.get(sent.size() - 1).text(), "then records are merged again");
  }

  /**
   * Retrying a merged batch would read and merge the whole head of the queue again on every retry,
   * on the queue's I/O thread and the lane's event loop that other tenants share (tens of
   * milliseconds for a full batch).
   */
  @Test
  void whileFailingRecordsAreSentOneByOne() {
    queuedWhileAAnswers(503, 3);
    advance(1_000);
    List<ScriptedSender.Call> sent = downstream.callsTo("a");
    assertTrue(sent.size() >= 4, "retries: " + sent.size());
    assertEquals("a1a2a3", sent.get(0).text());
    for (ScriptedSender.Call s : sent.subList(1, sent.size())) {
      assertEquals("a1", s.text(), "one record per request after a failure: " + s.text());
    }
  }

  @Test
  void rejectedRecordsAreDroppedAndCounted() {
    open();
    downstream.script("a", Reply.status(400));
    submit(fragment("a1", "a"));
    assertEquals(List.of("a:1:400"), drained, "dropped");
    assertTrue(queue("a").isEmpty());
    submit(fragment("a2", "a"));
    assertEquals(List.of("a:1:400", "a:1:200"), drained, "next delivered");
  }

  /**
   * Records rejected one after the other (a tenant over its series limit) make the lane rejecting
   * at the third; the drain goes on without a pause, and the next record delivered makes it
   * healthy.
   */
  @Test
  void threeQueuedRecordsRejectedInARowMakeTheLaneRejectingUntilOneIsDelivered() {
    open();
    downstream.script(
        "a",
        Reply.status(400, "per-user series limit of 5 exceeded"),
        Reply.status(400, "per-user series limit of 5 exceeded"),
        Reply.status(400, "per-user series limit of 5 exceeded"));
    for (int i = 1; i <= 3; i++) {
      submit(fragment("a" + i, "a"));
    }
    assertEquals(List.of("a:1:400", "a:1:400", "a:1:400"), drained);
    assertEquals(List.of("a REJECTING"), states);
    submit(fragment("a4", "a"));
    assertEquals(List.of("a:1:400", "a:1:400", "a:1:400", "a:1:200"), drained);
    assertEquals(List.of("a REJECTING", "a HEALTHY"), states);
  }

  /**
   * Queued records merged into one request that the downstream rejects as a whole because of one
   * bad record are read again in halves: the others are delivered, each once, and only the bad one
   * is dropped.
   */
  @Test
  void rejectedMergedRecordsAreSentAgainInHalvesAndOnlyTheBadOneIsDropped() {
    open();
    downstream.whenBodyContains("a", "BAD", Reply.status(400, "proto: unexpected end of group"));
    // a0 holds the queue's head long enough for the next four to be queued behind it.
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(800)));
    submit(fragment("a0", "a"));
    assertEquals(1, downstream.callsTo("a").size(), "a0 out");
    submit(fragment("a1", "a"), fragment("a2", "a"), fragment("a3BAD", "a"), fragment("a4", "a"));
    advance(800);
    assertEquals(4, drained.size());
    assertTrue(queue("a").isEmpty());
    assertEquals(
        List.of("a0", "a1a2a3BADa4", "a1a2", "a3BADa4", "a3BAD", "a4"),
        bodiesOf("a"),
        "merged, then halves");
    assertEquals(List.of("a:1:200", "a:2:200", "a:1:400", "a:1:200"), drained);
  }

  @Test
  void afterA429RecordsAreSentOneByOne() {
    queuedWhileAAnswers(429, 2);
    advance(1_000);
    assertTrue(downstream.callsTo("a").size() >= 3, "throttled retries");
    downstream.always("a", Reply.status(200));
    advance(1_000);
    assertTrue(queue("a").isEmpty(), "caught up");
    List<ScriptedSender.Call> sent = downstream.callsTo("a");
    for (ScriptedSender.Call s : sent.subList(1, sent.size())) {
      assertEquals(2, s.text().length(), "one record per request after a 429: " + s.text());
    }
  }

  /**
   * Series a 429 keeps queued are reported as throttled (counted like sync mode's throttled
   * fragments), each send once; a 503 is not a throttle.
   */
  @Test
  void queuedSeriesAnswered429AreReportedThrottledEachSend() {
    open(Duration.ofMillis(100));
    downstream.script("a", Reply.status(429), Reply.status(429), Reply.status(503));
    submit(fragment("a1", "a"));
    advanceUntil("delivered", () -> drained.contains("a:1:200"));
    assertEquals(List.of("a:1:429", "a:1:429"), throttled, "the direct send, then the queued one");
  }

  /**
   * In queue mode the lane never answers a fragment 429 itself, but its state says why it waits: a
   * 429 throttles it (until the downstream's {@code Retry-After}), a 5xx backs it off, and the
   * first 2xx makes it healthy. The state is what the lane's metric and log report.
   */
  @Test
  void a429ThrottlesTheQueueingLaneUntilItsRetryAfterAndA5xxBacksItOff() {
    open();
    downstream.script(
        "a", Reply.retryAfter(429, Duration.ofSeconds(2)), Reply.status(503), Reply.status(200));
    submit(fragment("a1", "a"));
    assertEquals(Kind.QUEUED, outcomes.get("a1").kind());
    assertEquals(List.of("a THROTTLED"), states);
    advance(1_999);
    assertEquals(1, downstream.callsTo("a").size(), "nothing sent before the Retry-After");
    advance(1);
    assertEquals(2, downstream.callsTo("a").size(), "sent again at the Retry-After");
    assertEquals(List.of("a THROTTLED", "a BACKING_OFF"), states);
    advance(1_000);
    assertEquals(List.of("a THROTTLED", "a BACKING_OFF", "a HEALTHY"), states);
    assertEquals(List.of("a1", "a1", "a1"), bodiesOf("a"));
    assertEquals(List.of("a:1:200"), drained);
    assertTrue(queue("a").isEmpty());
  }

  @Test
  void queuedRecordsAreDeliveredAfterARestart() {
    queuedWhileAAnswers(503, 2);
    closeLanes();
    downstream.always("a", Reply.status(200));
    open();
    sim.runDue();
    assertTrue(queue("a").isEmpty(), "resumed");
    String last = downstream.callsTo("a").get(downstream.callsTo("a").size() - 1).text();
    assertEquals("a1a2", last);
  }

  @Test
  void unwritableQueueIsAnswered503() {
    open();
    queue("newtenant").refuseAppends("no space left on device");
    submit(fragment("a1", "newtenant"));
    FragmentOutcome o = outcomes.get("a1");
    assertEquals(Kind.UNAVAILABLE, o.kind(), o.message());
    assertEquals(503, o.status());
    assertTrue(o.message().startsWith("cannot write the tenant's queue"), o.message());
    assertEquals("cannot write the tenant's queue: no space left on device", o.message());
  }
}
