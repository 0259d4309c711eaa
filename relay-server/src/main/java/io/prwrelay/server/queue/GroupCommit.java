package io.prwrelay.server.queue;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The appends of a store, written by group commit: an append is handed to the {@link IoThread} (a
 * retained slice of its payload, no copy on the caller's thread), which writes every append waiting
 * at that moment, flushes each segment it touched once ({@code FileChannel.force}, up to {@value
 * #SYNC_THREADS} segments at the same time), and only then completes their futures.
 *
 * <p>State: the appends waiting for the I/O thread ({@link #pending}, any thread adds, the I/O
 * thread takes) and whether a flush is scheduled for them. Invariant: every append added is, in the
 * end, completed by a flush or failed by {@link #failPending}, and its payload slice released
 * exactly once. A failed write or flush cuts the segment back to where the batch began and fails
 * the appends written there with an {@link IOException} naming the file.
 */
final class GroupCommit {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.queue");

  /** Threads flushing segments at once, at most. */
  static final int SYNC_THREADS = 16;

  /** How long the last flush waits for new tenants' files, in all. */
  static final long LAST_FLUSH_MAKING_WAIT_MILLIS = 5_000;

  private final IoThread ioThread;
  private final Retention retention;
  private final QueueLimits limits;
  private final SegmentIo io;
  private final RecordCodec codec;
  private final ConcurrentLinkedQueue<PendingAppend> pending = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean flushScheduled = new AtomicBoolean();

  /** New tenants' files, made off this thread while their appends wait. */
  private final TenantCreation<PendingAppend> creation;

  /** Appends whose tenant's files were just made: written before {@link #pending}. I/O thread. */
  private final List<PendingAppend> resumed = new ArrayList<>();

  /**
   * Flushes the segments of one group commit at the same time. A commit of a request that carries
   * 1,000 tenants touches 1,000 files; flushed one after another they cost one device flush each
   * (0.3-0.5 ms here), flushed together the file system can serve them with far fewer journal
   * commits. The threads spend their time waiting in {@code fdatasync}, not on a CPU.
   */
  private final ThreadPoolExecutor syncers;

  GroupCommit(
      IoThread ioThread, Retention retention, QueueLimits limits, SegmentIo io, RecordCodec codec) {
    this.ioThread = ioThread;
    this.retention = retention;
    this.limits = limits;
    this.io = io;
    this.codec = codec;
    AtomicInteger syncerIds = new AtomicInteger();
    this.syncers =
        new ThreadPoolExecutor(
            SYNC_THREADS,
            SYNC_THREADS,
            10,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "prw-relay-queue-sync-" + syncerIds.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.syncers.allowCoreThreadTimeOut(true);
    this.creation =
        new TenantCreation<>(
            ioThread,
            ready -> {
              resumed.addAll(ready);
              flush();
            },
            (failed, e) -> failed.forEach(p -> p.fail(e)));
  }

  /**
   * Hands one append to the I/O thread.
   *
   * @param payload borrowed: a retained slice of its readable bytes is kept until written
   * @return completed with the record's position once it is on the device, or exceptionally
   */
  CompletableFuture<TenantQueue.Position> append(
      TenantLog log, ByteBuf payload, int series, boolean remoteWrite2, long now) {
    if (series < 0) {
      throw new IllegalArgumentException("series must not be negative: " + series);
    }
    if (ioThread.isClosed()) {
      return CompletableFuture.failedFuture(ioThread.closedException());
    }
    int payloadBytes = payload.readableBytes();
    long recordBytes = (long) RecordLayout.RECORD_HEADER_BYTES + payloadBytes;
    if (payloadBytes > RecordLayout.MAX_PAYLOAD_BYTES || recordBytes > limits.maxRecordBytes()) {
      return CompletableFuture.failedFuture(
          new IOException(
              "record of "
                  + recordBytes
                  + " bytes for tenant "
                  + log.tenant
                  + " is larger than the queue bound of "
                  + limits.maxRecordBytes()
                  + " bytes"));
    }
    PendingAppend p =
        new PendingAppend(
            log, payload.retainedSlice(), RecordLayout.seriesField(series, remoteWrite2), now);
    pending.add(p);
    if (flushScheduled.compareAndSet(false, true)) {
      try {
        ioThread.execute(this::flush);
      } catch (RejectedExecutionException e) {
        // Closed meanwhile: handled below.
      }
    }
    if (ioThread.isClosed() && pending.remove(p)) {
      // close() began after the check above; its last flush may have missed this append.
      p.fail(ioThread.closedException());
    }
    return p.future;
  }

  /**
   * Writes every pending append, flushes each touched segment once, then completes them all. On the
   * I/O thread.
   */
  void flush() {
    flushScheduled.set(false);
    List<PendingAppend> batch = new ArrayList<>(resumed);
    resumed.clear();
    for (PendingAppend p; (p = pending.poll()) != null; ) {
      batch.add(p);
    }
    if (ioThread.isIoClosed()) {
      batch.forEach(p -> p.fail(ioThread.closedException()));
      return;
    }
    // A new tenant's appends wait, in order, while its files are made on other threads: the
    // appends of tenants whose queues exist never wait for that here.
    batch.removeIf(p -> creation.park(p.log, p));
    if (batch.isEmpty()) {
      return;
    }
    Map<Segment, Touched> touched = new LinkedHashMap<>();
    try {
      for (PendingAppend p : batch) {
        write(p, touched);
      }
      forceAll(touched);
      for (Map.Entry<Segment, Touched> e : touched.entrySet()) {
        Touched t = e.getValue();
        if (t.forceError != null) {
          Segment s = e.getKey();
          t.failure = SegmentIo.failure("cannot flush queue segment", s.path, t.forceError);
          t.log.rollback(s, t.sizeBefore);
        }
      }
      Set<TenantLog> logs = Collections.newSetFromMap(new IdentityHashMap<>());
      for (PendingAppend p : batch) {
        if (logs.add(p.log)) {
          p.log.persistHead(false);
        }
      }
    } catch (RuntimeException | Error e) {
      LOG.log(Level.SEVERE, "queue write failed unexpectedly", e);
      IOException failure = new IOException("queue write failed: " + e, e);
      for (PendingAppend p : batch) {
        p.fail(failure);
      }
      throw e;
    }
    for (PendingAppend p : batch) {
      Touched t = p.segment == null ? null : touched.get(p.segment);
      if (p.failure != null) {
        p.fail(p.failure);
      } else if (t != null && t.failure != null) {
        p.fail(t.failure);
      } else {
        p.future.complete(p.position);
      }
    }
  }

  /**
   * The last flush before the store closes: writes what is waiting, including the appends of new
   * tenants whose files are being made once they are (waiting at most {@value
   * #LAST_FLUSH_MAKING_WAIT_MILLIS} ms for them), and fails the appends of tenants whose files are
   * not made by then. I/O thread.
   */
  void flushLast() {
    flush();
    creation.finishMaking(LAST_FLUSH_MAKING_WAIT_MILLIS);
    creation.failAll(ioThread.closedException());
  }

  /** Stops the flushing threads and fails the appends still waiting (after the last flush). */
  void close() {
    syncers.shutdown();
    creation.close();
    for (PendingAppend p; (p = pending.poll()) != null; ) {
      p.fail(ioThread.closedException());
    }
  }

  /**
   * Flushes every touched segment to the device, several at once ({@link #syncers}), and returns
   * when all are done; a failure is left in the segment's {@link Touched#forceError}.
   */
  private void forceAll(Map<Segment, Touched> touched) {
    List<FileChannel> channels = new ArrayList<>(touched.size());
    List<Touched> owners = new ArrayList<>(touched.size());
    for (Map.Entry<Segment, Touched> e : touched.entrySet()) {
      Segment s = e.getKey();
      if (s.deleted || s.channel == null) {
        continue; // every record written to it was dropped meanwhile
      }
      channels.add(s.channel);
      owners.add(e.getValue());
    }
    if (channels.size() == 1) {
      force(channels.get(0), owners.get(0));
      return;
    }
    CountDownLatch done = new CountDownLatch(channels.size());
    for (int i = 0; i < channels.size(); i++) {
      FileChannel ch = channels.get(i);
      Touched t = owners.get(i);
      Runnable task =
          () -> {
            try {
              force(ch, t);
            } finally {
              done.countDown();
            }
          };
      try {
        syncers.execute(task);
      } catch (RejectedExecutionException e) {
        task.run();
      }
    }
    boolean interrupted = false;
    while (true) {
      try {
        done.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void force(FileChannel channel, Touched t) {
    try {
      io.force(channel, false);
    } catch (IOException | RuntimeException e) {
      t.forceError = e instanceof IOException io ? io : new IOException(e.toString(), e);
    }
  }

  /** Makes room for, and writes (without flushing), one pending append. */
  private void write(PendingAppend p, Map<Segment, Touched> touched) {
    try {
      int recordBytes = RecordLayout.recordBytes(p.payload.readableBytes());
      retention.makeRoom(p.log, recordBytes, p.nowMillis);
      Segment s = p.log.segmentFor(recordBytes, limits.segmentBytes());
      touched.computeIfAbsent(s, k -> new Touched(p.log, k.size));
      ByteBuffer[] sources = codec.sources(p.payload, recordBytes, p.nowMillis, p.series);
      long at = s.size;
      p.log.append(s, sources, recordBytes, p.nowMillis, p.series);
      p.segment = s;
      p.position = new TenantQueue.Position(s.id, at);
    } catch (IOException e) {
      p.failure = e;
    } finally {
      p.payload.release();
      p.payload = null;
    }
  }

  /** A segment written by the current flush: whose it is and where its unflushed part begins. */
  private static final class Touched {
    final TenantLog log;
    final long sizeBefore;
    IOException failure;

    /** Set by the thread that flushed the segment, read after it is done. */
    IOException forceError;

    Touched(TenantLog log, long sizeBefore) {
      this.log = log;
      this.sizeBefore = sizeBefore;
    }
  }

  /** An append waiting for the I/O thread. */
  private static final class PendingAppend {
    final TenantLog log;
    final int series;
    final long nowMillis;
    final CompletableFuture<TenantQueue.Position> future = new CompletableFuture<>();
    ByteBuf payload;
    Segment segment;
    TenantQueue.Position position;
    IOException failure;

    PendingAppend(TenantLog log, ByteBuf payload, int series, long nowMillis) {
      this.log = log;
      this.payload = payload;
      this.series = series;
      this.nowMillis = nowMillis;
    }

    void fail(IOException e) {
      if (payload != null) {
        payload.release();
        payload = null;
      }
      future.completeExceptionally(e);
    }
  }
}
