package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.QueueTesting.T0;
import static io.prwrelay.server.queue.QueueTesting.append;
import static io.prwrelay.server.queue.QueueTesting.appendAsync;
import static io.prwrelay.server.queue.QueueTesting.get;
import static io.prwrelay.server.queue.QueueTesting.payload;
import static io.prwrelay.server.queue.QueueTesting.peek;
import static io.prwrelay.server.queue.QueueTesting.peekAll;
import static io.prwrelay.server.queue.QueueTesting.segmentFiles;
import static io.prwrelay.server.queue.QueueTesting.take;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.server.queue.QueueTesting.RecordingListener;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class QueueStoreTest {
  /** Bytes a record with a 10-byte payload takes on disk. */
  private static final int TEN = RecordLayout.recordBytes(10);

  @TempDir Path dir;

  private final RecordingListener listener = new RecordingListener();

  private QueueStore open(QueueLimits limits) throws IOException {
    return QueueStore.open(dir, limits, listener);
  }

  /** Appends records 0 to {@code count - 1}, one series each. */
  private static void appendTens(FileTenantQueue q, int count) throws Exception {
    for (int i = 0; i < count; i++) {
      append(q, ten(i), 1, T0);
    }
  }

  private static String ten(int i) {
    return String.format("record%04d", i);
  }

  @Test
  void readsRecordsInAppendOrderAcrossSegmentRolls() throws Exception {
    try (QueueStore store = open(QueueLimits.DEFAULTS.withSegmentBytes(100))) {
      FileTenantQueue q = store.queue("team-a");
      appendTens(q, 20);
      Path tenantDir = dir.resolve("team-a");
      assertEquals(7, segmentFiles(tenantDir).size(), "three 30-byte records per 100-byte segment");

      List<String> got = new ArrayList<>();
      while (!q.isEmpty()) {
        got.addAll(take(q, 4));
      }
      List<String> want = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        want.add(ten(i));
      }
      assertEquals(want, got);
      assertEquals(
          1, segmentFiles(tenantDir).size(), "consumed segments are deleted, the last one stays");
    }
  }

  @Test
  void readDoesNotConsumeAndRespectsRecordAndByteLimits() throws Exception {
    try (QueueStore store = open(QueueLimits.DEFAULTS)) {
      FileTenantQueue q = store.queue("t");
      appendTens(q, 5);
      assertEquals(List.of(ten(0), ten(1)), peek(q, 2));
      assertEquals(List.of(ten(0), ten(1)), peek(q, 2), "reading again returns the same records");
      List<QueuedRecord> byBytes = get(q.read(100, 25, PooledByteBufAllocator.DEFAULT));
      assertEquals(List.of(ten(0), ten(1)), QueueTesting.texts(byBytes), "20 payload bytes fit 25");
      List<QueuedRecord> oneLarge = get(q.read(100, 3, PooledByteBufAllocator.DEFAULT));
      assertEquals(List.of(ten(0)), QueueTesting.texts(oneLarge), "the first record always comes");
    }
  }

  @Test
  void ackIsCumulativeAndIgnoresRecordsAlreadyConsumed() throws Exception {
    try (QueueStore store = open(QueueLimits.DEFAULTS)) {
      FileTenantQueue q = store.queue("t");
      appendTens(q, 5);
      List<QueuedRecord> three = get(q.read(3, Long.MAX_VALUE, PooledByteBufAllocator.DEFAULT));
      get(q.ack(List.of(three.get(2))));
      get(q.ack(List.of(three.get(0))));
      QueueTesting.texts(three);
      assertEquals(List.of(ten(3), ten(4)), peekAll(q));
    }
  }

  @Test
  void reopeningKeepsUnacknowledgedRecordsAndDropsAcknowledgedOnes() throws Exception {
    QueueLimits limits = QueueLimits.DEFAULTS.withSegmentBytes(100);
    try (QueueStore store = open(limits)) {
      for (int i = 0; i < 10; i++) {
        append(store.queue("a"), ten(i), 2, T0 + i);
        append(store.queue("B.b"), ten(100 + i), 3, T0 + i);
      }
      assertEquals(List.of(ten(0), ten(1), ten(2), ten(3)), take(store.queue("a"), 4));
    }
    try (QueueStore store = open(limits)) {
      assertEquals(2, store.queues().size());
      FileTenantQueue a = store.queue("a");
      assertEquals(6, a.records());
      assertEquals(12, a.series());
      assertEquals(6L * TEN, a.bytes());
      assertEquals(OptionalLong.of(T0 + 4), a.oldestAppendMillis());
      assertEquals(16, store.records());
      assertEquals(16L * TEN, store.bytes());
      assertEquals(12 + 30, store.series());
      List<String> want = new ArrayList<>();
      for (int i = 4; i < 10; i++) {
        want.add(ten(i));
      }
      assertEquals(want, peekAll(a));
      assertEquals(10, peekAll(store.queue("B.b")).size());
    }
  }

  @Test
  void countersFollowAppendsAndAcks() throws Exception {
    try (QueueStore store = open(QueueLimits.DEFAULTS)) {
      FileTenantQueue q = store.queue("t");
      assertTrue(q.isEmpty());
      assertEquals(OptionalLong.empty(), q.oldestAppendMillis());
      assertEquals(0, q.oldestAgeMillis(T0));
      append(q, ten(0), 7, T0);
      append(q, ten(1), 5, T0 + 1000);
      assertEquals(2, q.records());
      assertEquals(12, q.series());
      assertEquals(2L * TEN, q.bytes());
      assertEquals(1500, q.oldestAgeMillis(T0 + 1500));
      take(q, 1);
      assertEquals(1, q.records());
      assertEquals(5, q.series());
      assertEquals(500, q.oldestAgeMillis(T0 + 1500));
      assertEquals(OptionalLong.of(T0 + 1000), store.oldestAppendMillis());
      take(q, 1);
      assertEquals(0, store.bytes());
      assertEquals(OptionalLong.empty(), store.oldestAppendMillis());
    }
  }

  @Test
  void underDropOldestTheTenantByteBoundDropsItsOwnOldestRecords() throws Exception {
    try (QueueStore store =
        open(
            QueueLimits.DEFAULTS
                .withTenantMaxBytes(3L * TEN)
                .withFullPolicy(QueueFullPolicy.DROP_OLDEST))) {
      FileTenantQueue q = store.queue("t");
      FileTenantQueue other = store.queue("other");
      append(other, ten(99), 1, T0);
      for (int i = 0; i < 5; i++) {
        append(q, ten(i), 4, T0);
      }
      assertEquals(List.of(ten(2), ten(3), ten(4)), peekAll(q));
      assertArrayEquals(
          new long[] {2, 8, 2L * TEN},
          listener.dropped("t", DropReason.BYTES),
          "records, series, bytes");
      assertEquals(List.of(ten(99)), peekAll(other), "other tenants keep theirs");
    }
  }

  @Test
  void ageBoundDropsOldRecordsOnAppendAndOnExpire() throws Exception {
    try (QueueStore store = open(QueueLimits.DEFAULTS.withTenantMaxAge(Duration.ofSeconds(1)))) {
      FileTenantQueue q = store.queue("t");
      FileTenantQueue idle = store.queue("idle");
      append(idle, "idle", 3, T0);
      append(q, ten(0), 2, T0);
      append(q, ten(1), 2, T0 + 500);
      append(q, ten(2), 2, T0 + 1600);
      assertEquals(
          List.of(ten(2)), peekAll(q), "appending at +1.6 s drops what is older than +0.6 s");
      assertArrayEquals(new long[] {2, 4, 2L * TEN}, listener.dropped("t", DropReason.AGE));
      assertEquals(List.of("idle"), peekAll(idle), "an append applies the age bound to its tenant");

      get(store.expire(T0 + 2600));
      assertEquals(List.of(ten(2)), peekAll(q), "exactly one second old is not too old");
      assertEquals(0, idle.records());
      assertEquals(1, listener.dropped("idle", DropReason.AGE)[0]);
      get(store.expire(T0 + 2601));
      assertTrue(q.isEmpty());
      assertEquals(3, listener.dropped("t", DropReason.AGE)[0]);
    }
  }

  @Test
  void recordLargerThanABoundIsRefused() throws Exception {
    try (QueueStore store = open(QueueLimits.DEFAULTS.withTenantMaxBytes(TEN))) {
      FileTenantQueue q = store.queue("t");
      append(q, ten(0), 1, T0);
      IOException e = assertThrows(IOException.class, () -> append(q, "eleven-byte", 1, T0));
      assertTrue(e.getMessage().contains("larger than the queue bound"), e.getMessage());
      assertEquals(List.of(ten(0)), peekAll(q));
    }
  }

  @Test
  void groupCommitFlushesManyWaitingAppendsOnce() throws Exception {
    GatedIo io = new GatedIo();
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, listener, io)) {
      FileTenantQueue q = store.queue("t");
      append(q, "warm-up", 1, T0);
      io.gate = true;
      CompletableFuture<Void> first = appendAsync(q, "first", T0);
      assertTrue(io.inForce.await(30, TimeUnit.SECONDS));
      int before = io.forces.get();
      List<CompletableFuture<Void>> waiting = new ArrayList<>();
      Thread[] threads = new Thread[4];
      for (int t = 0; t < threads.length; t++) {
        int base = t * 50;
        threads[t] =
            new Thread(
                () -> {
                  for (int i = 0; i < 50; i++) {
                    CompletableFuture<Void> f = appendAsync(q, ten(base + i), T0);
                    synchronized (waiting) {
                      waiting.add(f);
                    }
                  }
                });
        threads[t].start();
      }
      for (Thread t : threads) {
        t.join();
      }
      assertFalse(first.isDone(), "the first append waits for its flush");
      io.release.countDown();
      get(first);
      for (CompletableFuture<Void> f : waiting) {
        get(f);
      }
      assertEquals(1, io.forces.get() - before, "200 appends waiting together share one fsync");
      assertEquals(202, q.records());
    }
  }

  @Test
  void unwritableQueueDirectoryFailsAppendsWithThePath() throws Exception {
    Path root = dir.resolve("queues");
    try (QueueStore store = QueueStore.open(root, QueueLimits.DEFAULTS, listener)) {
      Files.delete(root.resolve("lock"));
      Files.delete(root);
      Files.writeString(root, "a regular file where the queue directory was");
      FileTenantQueue q = store.queue("t");
      IOException e = assertThrows(IOException.class, () -> append(q, "x", 1, T0));
      assertTrue(e.getMessage().contains(root.resolve("t").toString()), e.getMessage());
      assertTrue(q.isEmpty());
    }
  }

  @Test
  void openingUnderARegularFileFailsWithThePath() throws Exception {
    Path file = dir.resolve("file");
    Files.writeString(file, "x");
    IOException e =
        assertThrows(
            IOException.class,
            () -> QueueStore.open(file.resolve("queues"), QueueLimits.DEFAULTS, listener));
    assertTrue(e.getMessage().contains(file.resolve("queues").toString()), e.getMessage());
  }

  @Test
  void fullDiskFailsTheAppendAndKeepsNothingOfIt() throws Exception {
    FailingIo io = new FailingIo();
    IOException e = appendFailingOnce(io, on -> io.failWrites = on);
    assertTrue(e.getMessage().contains("No space left on device"), e.getMessage());
    assertTrue(e.getMessage().contains(dir.resolve("t").toString()), e.getMessage());
    assertTrue(listener.cuts.isEmpty(), "the failed write left nothing to cut");
  }

  @Test
  void failedFsyncFailsTheAppendAndTakesItBack() throws Exception {
    FailingIo io = new FailingIo();
    IOException e = appendFailingOnce(io, on -> io.failForces = on);
    assertTrue(e.getMessage().contains("cannot flush queue segment"), e.getMessage());
  }

  /**
   * Appends record 0, then record 1 with {@code failing} switched on, then record 2: the failed
   * append throws, and the queue holds records 0 and 2 only, right away and when opened again.
   *
   * @return the failed append's exception
   */
  private IOException appendFailingOnce(FailingIo io, Consumer<Boolean> failing) throws Exception {
    IOException e;
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, listener, io)) {
      FileTenantQueue q = store.queue("t");
      append(q, ten(0), 1, T0);
      failing.accept(true);
      e = assertThrows(IOException.class, () -> append(q, ten(1), 1, T0));
      failing.accept(false);
      assertEquals(List.of(ten(0)), peekAll(q));
      append(q, ten(2), 1, T0);
      assertEquals(List.of(ten(0), ten(2)), peekAll(q));
    }
    try (QueueStore store = open(QueueLimits.DEFAULTS)) {
      assertEquals(List.of(ten(0), ten(2)), peekAll(store.queue("t")));
    }
    return e;
  }

  @Test
  void closedStoreFailsEveryOperation() throws Exception {
    QueueStore store = open(QueueLimits.DEFAULTS);
    FileTenantQueue q = store.queue("t");
    append(q, ten(0), 1, T0);
    store.close();
    store.close();
    IOException e = assertThrows(IOException.class, () -> append(q, ten(1), 1, T0));
    assertTrue(e.getMessage().contains("closed"), e.getMessage());
    assertThrows(IOException.class, () -> peekAll(q));
    assertThrows(IOException.class, () -> get(store.expire(T0)));
  }

  @Test
  void closeWritesAppendsSubmittedBeforeIt() throws Exception {
    QueueStore store = open(QueueLimits.DEFAULTS);
    FileTenantQueue q = store.queue("t");
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      futures.add(appendAsync(q, ten(i), T0));
    }
    store.close();
    for (CompletableFuture<Void> f : futures) {
      get(f);
    }
    try (QueueStore reopened = open(QueueLimits.DEFAULTS)) {
      assertEquals(100, reopened.queue("t").records());
    }
  }

  @Test
  void secondStoreOnTheSameDirectoryIsRefused() throws Exception {
    try (QueueStore store = open(QueueLimits.DEFAULTS)) {
      IOException e = assertThrows(IOException.class, () -> open(QueueLimits.DEFAULTS));
      assertTrue(e.getMessage().contains("already open"), e.getMessage());
    }
    open(QueueLimits.DEFAULTS).close();
  }

  @Test
  void invalidTenantIdIsRefused() throws Exception {
    try (QueueStore store = open(QueueLimits.DEFAULTS)) {
      assertThrows(IllegalArgumentException.class, () -> store.queue(".."));
      assertThrows(IllegalArgumentException.class, () -> store.queue("a/b"));
    }
  }

  @Test
  void payloadReferenceCanBeReleasedRightAfterAppend() throws Exception {
    try (QueueStore store = open(QueueLimits.DEFAULTS)) {
      FileTenantQueue q = store.queue("t");
      ByteBuf p = payload("prefix-" + ten(0));
      p.skipBytes("prefix-".length());
      CompletableFuture<Void> f = q.append(p, 1, T0);
      p.release();
      get(f);
      assertEquals(List.of(ten(0)), peekAll(q), "only the readable bytes are queued");
    }
  }

  /** Counts flushes, and can hold the I/O thread inside one until released. */
  static final class GatedIo implements SegmentIo {
    final AtomicInteger forces = new AtomicInteger();
    final CountDownLatch inForce = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    volatile boolean gate;

    @Override
    public void force(FileChannel channel, boolean metadata) throws IOException {
      forces.incrementAndGet();
      if (gate) {
        gate = false;
        inForce.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      channel.force(metadata);
    }
  }

  /** Fails writes or flushes the way a full or broken disk does. */
  static final class FailingIo implements SegmentIo {
    volatile boolean failWrites;
    volatile boolean failForces;

    @Override
    public void write(FileChannel channel, ByteBuffer[] sources) throws IOException {
      if (failWrites) {
        channel.write(sources[0]); // a partial record reaches the file first
        throw new IOException("No space left on device");
      }
      SegmentIo.super.write(channel, sources);
    }

    @Override
    public void force(FileChannel channel, boolean metadata) throws IOException {
      if (failForces) {
        throw new IOException("Input/output error");
      }
      channel.force(metadata);
    }
  }
}
