package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.QueueTesting.T0;
import static io.prwrelay.server.queue.QueueTesting.append;
import static io.prwrelay.server.queue.QueueTesting.peekAll;
import static io.prwrelay.server.queue.QueueTesting.segmentFiles;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A listener that throws is logged and otherwise ignored ({@link QueueListener}): neither the
 * replay that cut a damaged tail ({@link CutReporter}) nor the append that dropped records to keep
 * a bound ({@link Retention}) fails because of it.
 */
class QueueListenerFailureTest {
  @TempDir Path dir;

  /** Counts its calls, then throws. */
  private static final class ThrowingListener implements QueueListener {
    final AtomicInteger drops = new AtomicInteger();
    final AtomicInteger cuts = new AtomicInteger();

    @Override
    public void dropped(String tenant, DropReason reason, long records, long series, long bytes) {
      drops.incrementAndGet();
      throw new IllegalStateException("listener broken");
    }

    @Override
    public void tailCut(String tenant, Path segment, long bytes) {
      cuts.incrementAndGet();
      throw new IllegalStateException("listener broken");
    }
  }

  @Test
  void replayCutsATornTailAndOpensWhenTheListenerThrows() throws Exception {
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      FileTenantQueue q = store.queue("t");
      append(q, "record-one", 1, T0);
      append(q, "record-two", 1, T0);
    }
    Path segment = segmentFiles(dir.resolve("t")).get(0);
    try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
      ch.truncate(ch.size() - 1);
    }

    ThrowingListener listener = new ThrowingListener();
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, listener)) {
      FileTenantQueue q = store.queue("t");
      assertEquals(List.of("record-one"), peekAll(q));
      assertEquals(1, listener.cuts.get());
      append(q, "record-new", 1, T0);
      assertEquals(List.of("record-one", "record-new"), peekAll(q));
    }
  }

  @Test
  void anAppendThatDropsRecordsSucceedsWhenTheListenerThrows() throws Exception {
    ThrowingListener listener = new ThrowingListener();
    QueueLimits limits =
        QueueLimits.DEFAULTS
            .withTenantMaxBytes(2L * RecordLayout.recordBytes(10))
            .withFullPolicy(QueueFullPolicy.DROP_OLDEST);
    try (QueueStore store = QueueStore.open(dir, limits, listener)) {
      FileTenantQueue q = store.queue("t");
      append(q, "record-one", 1, T0);
      append(q, "record-two", 1, T0);
      append(q, "record-333", 1, T0);
      assertEquals(List.of("record-two", "record-333"), peekAll(q));
      assertEquals(1, listener.drops.get());
      assertEquals(2, q.records());
    }
  }

  @Test
  void theExpiryCheckCompletesWhenTheListenerThrows() throws Exception {
    ThrowingListener listener = new ThrowingListener();
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, listener)) {
      FileTenantQueue q = store.queue("t");
      append(q, "record-old", 1, T0);
      QueueTesting.get(store.expire(T0 + QueueLimits.DEFAULTS.tenantMaxAge().toMillis() + 1));
      assertEquals(1, listener.drops.get());
      assertEquals(0, q.records());
    }
  }
}
