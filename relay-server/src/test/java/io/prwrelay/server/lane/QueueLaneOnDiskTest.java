package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Queue-mode lanes over the real on-disk queue and a real event loop, for what depends on the
 * files: records on disk before the answer, delivered after the store is closed and opened again,
 * nothing written for a batch delivered directly, and a directory that cannot be written. Every
 * other queue-mode decision is tested in simulated time ({@link QueueLaneTest}, {@link
 * DirectQueueLaneTest}).
 */
class QueueLaneOnDiskTest extends QueueLanesFixture {
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

  @Test
  void fragmentIsAnsweredOnceOnDiskAndThenDeliveredInOrder() throws Exception {
    open(Duration.ZERO);
    lanes.submit(List.of(fragment("a1", "a"), fragment("a2", "a"), fragment("a3", "a")));
    await("three answers", () -> outcomes.size() == 3);
    outcomes.values().forEach(o -> assertEquals(Kind.QUEUED, o.kind()));
    assertTrue(store.queue("a").diskBytes() > 0, "on disk when answered");
    await("delivery", () -> String.join("", bodiesOf("a")).equals("a1a2a3"));
    await("queue drained", () -> store.records() == 0);
  }

  @Test
  void queuedRecordsAreDeliveredAfterARestart() throws Exception {
    open(Duration.ZERO);
    downstream.always("a", Reply.status(503));
    lanes.submit(List.of(fragment("a1", "a"), fragment("a2", "a")));
    await("answers", () -> outcomes.size() == 2);
    closeLanes();
    downstream.always("a", Reply.status(200));
    open(Duration.ZERO);
    await("resumed", () -> store.queue("a").isEmpty());
    String last = downstream.callsTo("a").get(downstream.callsTo("a").size() - 1).text();
    assertEquals("a1a2", last);
  }

  /**
   * A fragment that reaches the lane before the drain of the backlog has read it is queued behind
   * that backlog. The lane's loop is held while the lanes open and a2 is handed to it, so that the
   * lane takes a2 right after starting the drain, before the queue's I/O thread can answer the
   * read: a2 arriving after that answer would wait in memory behind the last record and go directly
   * after its 2xx, also in order, but not queued (both cases: {@link DirectQueueLaneTest}).
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
  void unwritableQueueIsAnswered503() throws Exception {
    open(Duration.ZERO);
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
