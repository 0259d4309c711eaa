package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lanes in queue mode over a real on-disk queue and a real event loop: a fragment is answered once
 * it is on disk, each lane drains its own queue in order, a failing tenant keeps its records while
 * others flow, and a restart resumes what was queued.
 */
class QueueLaneTest extends QueueLanesFixture {
  private Lanes open() throws Exception {
    return open(Duration.ZERO);
  }

  /**
   * Opens the lanes with tenant a's downstream always answering {@code status}, submits fragments
   * a1 to a{@code count} of tenant a at once and waits until each is answered.
   */
  private void queuedWhileAAnswers(int status, int count) throws Exception {
    open();
    downstream.always("a", Reply.status(status));
    List<Fragment> fragments = new ArrayList<>();
    for (int i = 1; i <= count; i++) {
      fragments.add(fragment("a" + i, "a"));
    }
    lanes.submit(fragments);
    await("answers", () -> outcomes.size() == count);
  }

  @Test
  void fragmentIsAnsweredOnceOnDiskAndThenDeliveredInOrder() throws Exception {
    open();
    lanes.submit(List.of(fragment("a1", "a"), fragment("a2", "a"), fragment("a3", "a")));
    await("three answers", () -> outcomes.size() == 3);
    outcomes.values().forEach(o -> assertEquals(Kind.QUEUED, o.kind()));
    await("delivery", () -> String.join("", bodiesOf("a")).equals("a1a2a3"));
    await("queue drained", () -> store.records() == 0);
  }

  @Test
  void failingTenantKeepsItsRecordsWhileOthersFlowAndCatchesUpMerged() throws Exception {
    open();
    downstream.always("bad", Reply.status(503));
    lanes.submit(List.of(fragment("b1", "bad"), fragment("ok1", "ok")));
    lanes.submit(List.of(fragment("b2", "bad"), fragment("ok2", "ok")));
    lanes.submit(List.of(fragment("b3", "bad")));
    await("answers", () -> outcomes.size() == 5);
    outcomes.values().forEach(o -> assertEquals(Kind.QUEUED, o.kind()));
    await("healthy tenant delivered", () -> String.join("", bodiesOf("ok")).equals("ok1ok2"));
    await("bad tenant retried", () -> downstream.callsTo("bad").size() >= 3);
    assertEquals(3, store.queue("bad").records(), "nothing acknowledged while failing");
    downstream.always("bad", Reply.status(200));
    await("bad tenant caught up", () -> store.queue("bad").isEmpty());
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
  void whileFailingRecordsAreSentOneByOne() throws Exception {
    queuedWhileAAnswers(503, 3);
    await("retries", () -> downstream.callsTo("a").size() >= 4);
    List<ScriptedSender.Call> sent = downstream.callsTo("a");
    for (ScriptedSender.Call s : sent.subList(1, sent.size())) {
      assertEquals("a1", s.text(), "one record per request after a failure: " + s.text());
    }
  }

  @Test
  void rejectedRecordsAreDroppedAndCounted() throws Exception {
    open();
    downstream.script("a", Reply.status(400));
    lanes.submit(List.of(fragment("a1", "a")));
    await("dropped", () -> drained.contains("a:1:400"));
    await("queue empty", () -> store.queue("a").isEmpty());
    lanes.submit(List.of(fragment("a2", "a")));
    await("next delivered", () -> drained.contains("a:1:200"));
  }

  /**
   * Queued records merged into one request that the downstream rejects as a whole because of one
   * bad record are read again in halves: the others are delivered, each once, and only the bad one
   * is dropped.
   */
  @Test
  void rejectedMergedRecordsAreSentAgainInHalvesAndOnlyTheBadOneIsDropped() throws Exception {
    open();
    downstream.whenBodyContains("a", "BAD", Reply.status(400, "proto: unexpected end of group"));
    // a0 holds the queue's head long enough for the next four to be queued behind it.
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(800)));
    lanes.submit(List.of(fragment("a0", "a")));
    await("a0 out", () -> downstream.callsTo("a").size() == 1);
    lanes.submit(
        List.of(
            fragment("a1", "a"), fragment("a2", "a"), fragment("a3BAD", "a"), fragment("a4", "a")));
    await("drained", () -> drained.size() == 4 && store.queue("a").isEmpty());
    assertEquals(
        List.of("a0", "a1a2a3BADa4", "a1a2", "a3BADa4", "a3BAD", "a4"),
        bodiesOf("a"),
        "merged, then halves");
    assertEquals(List.of("a:1:200", "a:2:200", "a:1:400", "a:1:200"), drained);
  }

  @Test
  void afterA429RecordsAreSentOneByOne() throws Exception {
    queuedWhileAAnswers(429, 2);
    await("throttled retries", () -> downstream.callsTo("a").size() >= 3);
    downstream.always("a", Reply.status(200));
    await("caught up", () -> store.queue("a").isEmpty());
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
  void queuedSeriesAnswered429AreReportedThrottledEachSend() throws Exception {
    open(Duration.ofMillis(100));
    downstream.script("a", Reply.status(429), Reply.status(429), Reply.status(503));
    lanes.submit(List.of(fragment("a1", "a")));
    await("delivered", () -> drained.contains("a:1:200"));
    assertEquals(List.of("a:1:429", "a:1:429"), throttled, "the direct send, then the queued one");
  }

  @Test
  void queuedRecordsAreDeliveredAfterARestart() throws Exception {
    queuedWhileAAnswers(503, 2);
    closeLanes();
    downstream.always("a", Reply.status(200));
    open();
    await("resumed", () -> store.queue("a").isEmpty());
    String last = downstream.callsTo("a").get(downstream.callsTo("a").size() - 1).text();
    assertEquals("a1a2", last);
  }

  @Test
  void unwritableQueueIsAnswered503() throws Exception {
    open();
    Path queueDir = dir.resolve("queue");
    Path moved = dir.resolve("moved");
    Files.move(queueDir, moved);
    Files.writeString(queueDir, "not a directory");
    lanes.submit(List.of(fragment("a1", "newtenant")));
    await("answer", () -> outcomes.containsKey("a1"));
    FragmentOutcome o = outcomes.get("a1");
    assertEquals(Kind.UNAVAILABLE, o.kind(), o.message());
    assertEquals(503, o.status());
    assertTrue(o.message().startsWith("cannot write the tenant's queue"), o.message());
  }
}
