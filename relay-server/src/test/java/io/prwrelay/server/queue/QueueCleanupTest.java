package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.QueueTesting.T0;
import static io.prwrelay.server.queue.QueueTesting.append;
import static io.prwrelay.server.queue.QueueTesting.copyTree;
import static io.prwrelay.server.queue.QueueTesting.get;
import static io.prwrelay.server.queue.QueueTesting.peekAll;
import static io.prwrelay.server.queue.QueueTesting.segmentFiles;
import static io.prwrelay.server.queue.QueueTesting.take;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.queue.QueueTesting.RecordingListener;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A drained tenant queue leaves nothing on disk after the next check ({@link QueueStore#expire}):
 * its last, delivered segment, its head and tenant files and its directory go; a restart then
 * recovers none of its delivered records and every record of the other tenants; a crash at any step
 * of the removal does the same.
 */
class QueueCleanupTest {
  private static final QueueLimits SMALL_SEGMENTS = QueueLimits.DEFAULTS.withSegmentBytes(100);

  @TempDir Path dir;

  private final RecordingListener listener = new RecordingListener();

  private static List<String> records(String prefix, int count) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      out.add(String.format("%s%04d", prefix, i));
    }
    return out;
  }

  private static void appendAll(FileTenantQueue q, List<String> texts) throws Exception {
    for (String t : texts) {
      append(q, t, 1, T0);
    }
  }

  private static List<String> drain(FileTenantQueue q) throws Exception {
    List<String> got = new ArrayList<>();
    while (!q.isEmpty()) {
      got.addAll(take(q, 4));
    }
    return got;
  }

  private static long segmentBytesOnDisk(Path tenantDir) throws IOException {
    long sum = 0;
    for (Path p : segmentFiles(tenantDir)) {
      sum += Files.size(p);
    }
    return sum;
  }

  @Test
  void aDrainedQueueLeavesNoFileAndNoDirectoryAfterTheCheck() throws Exception {
    try (QueueStore store = QueueStore.open(dir, SMALL_SEGMENTS, listener)) {
      FileTenantQueue a = store.queue("team-a");
      FileTenantQueue b = store.queue("team-b");
      appendAll(a, records("a-", 20));
      appendAll(b, records("b-", 5));
      Path aDir = dir.resolve("team-a");
      Path bDir = dir.resolve("team-b");
      assertEquals(segmentBytesOnDisk(aDir) + segmentBytesOnDisk(bDir), store.diskBytes());

      assertEquals(records("a-", 20), drain(a));
      assertEquals(1, segmentFiles(aDir).size(), "until the check, the last segment stays");
      assertEquals(segmentBytesOnDisk(aDir), a.diskBytes(), "and is counted as on disk");
      assertTrue(a.diskBytes() > 0);

      get(store.expire(T0));
      assertFalse(Files.exists(aDir), "the drained tenant's directory is gone");
      assertEquals(0, a.diskBytes());
      assertEquals(segmentBytesOnDisk(bDir), b.diskBytes(), "the other tenant keeps its records");
      assertEquals(b.diskBytes(), store.diskBytes());
      assertEquals(records("b-", 5), peekAll(b));
      try (Stream<Path> entries = Files.list(dir)) {
        assertEquals(
            List.of("lock", "team-b"),
            entries.map(p -> p.getFileName().toString()).sorted().toList());
      }

      appendAll(a, List.of("again"));
      assertTrue(Files.isDirectory(aDir), "the next append makes the directory again");
      assertEquals(List.of("again"), peekAll(a));
    }
    try (QueueStore store = QueueStore.open(dir, SMALL_SEGMENTS, listener)) {
      assertEquals(
          List.of("again"),
          peekAll(store.queue("team-a")),
          "a restart after the cleanup delivers nothing twice");
      assertEquals(records("b-", 5), peekAll(store.queue("team-b")), "and loses nothing");
    }
  }

  @Test
  void aQueueDrainedBeforeARestartIsRemovedAtTheFirstCheck() throws Exception {
    try (QueueStore store = QueueStore.open(dir, SMALL_SEGMENTS, listener)) {
      FileTenantQueue a = store.queue("team-a");
      appendAll(a, records("a-", 7));
      drain(a);
    }
    try (QueueStore store = QueueStore.open(dir, SMALL_SEGMENTS, listener)) {
      FileTenantQueue a = store.queue("team-a");
      assertTrue(a.isEmpty(), "nothing delivered comes back");
      get(store.expire(T0));
      assertFalse(Files.exists(dir.resolve("team-a")));
      assertEquals(0, store.diskBytes());
    }
  }

  /**
   * Stops the removal at each of its flushes (as a crash there would), takes a copy of the
   * directory at that moment, and replays the copy: the drained tenant comes back empty, the other
   * with every record. The stopped store itself stays usable.
   */
  @Test
  void aCrashAtAnyStepOfTheRemovalReplaysNothingDeliveredAndLosesNothing() throws Exception {
    for (int step = 1; step <= 3; step++) {
      Path root = dir.resolve("run-" + step);
      FailingForceIo io = new FailingForceIo();
      try (QueueStore store = QueueStore.open(root, SMALL_SEGMENTS, listener, io)) {
        FileTenantQueue a = store.queue("team-a");
        FileTenantQueue b = store.queue("team-b");
        appendAll(a, records("a-", 10));
        appendAll(b, records("b-", 4));
        drain(a);
        io.failAt(step);
        get(store.expire(T0));
        assertEquals(step, io.forcesSinceArmed.get(), "stopped at flush " + step);
        Path copy = dir.resolve("copy-" + step);
        copyTree(root, copy);
        Files.deleteIfExists(copy.resolve(RecordLayout.LOCK_FILE));
        try (QueueStore replayed = QueueStore.open(copy, SMALL_SEGMENTS, listener)) {
          assertEquals(List.of(), peekAll(replayed.queue("team-a")), "step " + step);
          assertEquals(records("b-", 4), peekAll(replayed.queue("team-b")), "step " + step);
        }
        appendAll(a, List.of("after"));
        assertEquals(List.of("after"), peekAll(a), "step " + step);
        assertEquals(records("b-", 4), peekAll(b), "step " + step);
      }
    }
  }

  /** Fails the n-th flush after {@link #failAt} was called (and only that one). */
  static final class FailingForceIo implements SegmentIo {
    final AtomicInteger forcesSinceArmed = new AtomicInteger();
    private volatile int failAt;

    void failAt(int n) {
      forcesSinceArmed.set(0);
      failAt = n;
    }

    @Override
    public void force(FileChannel channel, boolean metadata) throws IOException {
      if (failAt > 0 && forcesSinceArmed.incrementAndGet() == failAt) {
        failAt = 0;
        throw new IOException("Input/output error");
      }
      channel.force(metadata);
    }
  }
}
