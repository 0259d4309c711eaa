package io.prwrelay.server.queue;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.WRITE;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.route.TenantIds;
import io.prwrelay.core.route.TenantProblem;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.zip.CRC32C;

/**
 * The on-disk queues of queue mode: one {@link FileTenantQueue} per tenant under one directory,
 * their bounds, and the one I/O thread that does all their file work.
 *
 * <p>Layout: {@code <dir>/lock} (held while open, so two relays never share a directory) and one
 * directory per tenant, named by {@link TenantDirNames}, holding {@code tenant} (the tenant ID, so
 * replay does not depend on decoding names), {@code head} ({@link HeadFile}) and the segments
 * {@code <16-digit id>.seg} ({@link RecordLayout}).
 *
 * <p>Nothing here blocks the caller: appends are handed to the I/O thread, which writes every
 * append waiting at that moment, flushes each segment it touched once ({@code FileChannel.force}),
 * and only then completes their futures (group commit). Reads, acknowledgements and expiry run on
 * the same thread, in submission order.
 *
 * <p>Open with {@link #open}; {@link #close()} writes what is pending, flushes, and stops the
 * thread.
 */
public final class QueueStore implements TenantQueues, AutoCloseable {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.queue");
  private static final long CLOSE_WAIT_SECONDS = 10;

  private final Path dir;
  private final QueueLimits limits;
  private final QueueListener listener;
  private final SegmentIo io;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final QueueTotals totals = new QueueTotals();
  private final Map<String, FileTenantQueue> queues = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<PendingAppend> pending = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean flushScheduled = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final ThreadPoolExecutor executor;
  private volatile Thread ioThread;

  /**
   * Flushes the segments of one group commit at the same time. A commit of a request that carries
   * 1,000 tenants touches 1,000 files; flushed one after another they cost one device flush each
   * (0.3-0.5 ms here), flushed together the file system can serve them with far fewer journal
   * commits. The threads spend their time waiting in {@code fdatasync}, not on a CPU.
   */
  private final ThreadPoolExecutor syncers;

  /** Threads flushing segments at once, at most. */
  static final int SYNC_THREADS = 16;

  // I/O thread only.
  private final ByteBuffer recordHeader =
      ByteBuffer.allocateDirect(RecordLayout.RECORD_HEADER_BYTES);
  private final CRC32C crc = new CRC32C();
  private boolean ioClosed;

  private QueueStore(
      Path dir,
      QueueLimits limits,
      QueueListener listener,
      SegmentIo io,
      FileChannel lockChannel,
      FileLock lock) {
    this.dir = dir;
    this.limits = limits;
    this.listener = listener;
    this.io = io;
    this.lockChannel = lockChannel;
    this.lock = lock;
    this.executor =
        new ThreadPoolExecutor(
            1,
            1,
            0,
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "prw-relay-queue-io");
              t.setDaemon(true);
              ioThread = t;
              return t;
            });
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
  }

  /**
   * Opens (creating it if needed) the queue directory and replays every tenant queue in it: records
   * are validated from each head, a corrupt or torn tail is cut at the last good record (reported
   * to {@code listener} and logged), and consumed segments are deleted. Bounds are applied from the
   * next append or {@link #expire} on.
   *
   * @throws IOException when the directory cannot be created, read or written, is in use by another
   *     process, or holds data of a newer format; never because of corrupt data
   */
  public static QueueStore open(Path dir, QueueLimits limits, QueueListener listener)
      throws IOException {
    return open(dir, limits, listener, SegmentIo.FILES);
  }

  static QueueStore open(Path dir, QueueLimits limits, QueueListener listener, SegmentIo io)
      throws IOException {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw TenantLog.failure("cannot create queue directory", dir, e);
    }
    FileChannel lockChannel;
    try {
      lockChannel = FileChannel.open(dir.resolve(RecordLayout.LOCK_FILE), CREATE, WRITE);
    } catch (IOException e) {
      throw TenantLog.failure("cannot write in queue directory", dir, e);
    }
    FileLock lock = null;
    try {
      try {
        lock = lockChannel.tryLock();
      } catch (OverlappingFileLockException e) {
        throw new IOException("queue directory " + dir + " is already open in this process");
      }
      if (lock == null) {
        throw new IOException("queue directory " + dir + " is in use by another process");
      }
      QueueStore store = new QueueStore(dir, limits, listener, io, lockChannel, lock);
      store.replay();
      return store;
    } catch (IOException | RuntimeException e) {
      try {
        lockChannel.close(); // releases the lock too
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  private void replay() throws IOException {
    List<Path> dirs = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, Files::isDirectory)) {
      entries.forEach(dirs::add);
    }
    Collections.sort(dirs);
    SegmentScanner scanner = new SegmentScanner();
    for (Path tenantDir : dirs) {
      String tenant = tenantOf(tenantDir);
      if (tenant == null) {
        LOG.warning("ignoring " + tenantDir + ": not a tenant queue directory");
        continue;
      }
      if (queues.containsKey(tenant)) {
        LOG.severe(
            "ignoring " + tenantDir + ": another directory already holds the queue of " + tenant);
        continue;
      }
      TenantLog log = TenantLog.replay(tenant, dir, tenantDir, io, totals, listener, scanner);
      queues.put(tenant, new FileTenantQueue(this, log));
      if (log.records() > 0) {
        LOG.info(
            "queue of tenant "
                + tenant
                + ": "
                + log.records()
                + " records ("
                + log.bytes()
                + " bytes) to deliver");
      }
    }
  }

  /** The tenant a directory holds: its {@code tenant} file, else its decoded name. */
  private static String tenantOf(Path tenantDir) throws IOException {
    try {
      String tenant =
          new String(
              Files.readAllBytes(tenantDir.resolve(RecordLayout.TENANT_FILE)),
              StandardCharsets.UTF_8);
      if (TenantIds.problem(tenant) == null) {
        return tenant;
      }
    } catch (NoSuchFileException e) {
      // Created but not finished before a crash: the name says which tenant it is.
    }
    String decoded = TenantDirNames.decode(tenantDir.getFileName().toString());
    return decoded != null && TenantIds.problem(decoded) == null ? decoded : null;
  }

  // ---------------------------------------------------------------- public API

  /**
   * The queue of {@code tenant}, created (in memory; on disk with its first append) if needed.
   *
   * @param tenant a valid tenant ID (Cortex rules, {@link TenantIds})
   */
  @Override
  public FileTenantQueue queue(String tenant) {
    FileTenantQueue q = find(tenant);
    if (q != null) {
      return q;
    }
    TenantProblem problem = TenantIds.problem(tenant);
    if (problem != null) {
      throw new IllegalArgumentException("not a valid tenant ID (" + problem + "): " + tenant);
    }
    return queues.computeIfAbsent(
        tenant, t -> new FileTenantQueue(this, TenantLog.create(t, dir, io, totals, listener)));
  }

  /** The queue of {@code tenant} if this store knows it, else {@code null}; creates nothing. */
  public FileTenantQueue find(String tenant) {
    return queues.get(tenant);
  }

  /** Every tenant queue known, including empty ones (after a restart: every one on disk). */
  @Override
  public Collection<FileTenantQueue> queues() {
    return Collections.unmodifiableCollection(queues.values());
  }

  /**
   * Drops the records of every tenant older than the age bound at {@code nowMillis} (reported as
   * {@link DropReason#AGE}), then removes the files and directory of every tenant whose queue is
   * drained (its last segment, delivered, stays on disk until then). Call it periodically: appends
   * apply the bound only to their own tenant.
   */
  @Override
  public CompletableFuture<Void> expire(long nowMillis) {
    return submit(
        () -> {
          for (FileTenantQueue q : queues.values()) {
            dropOld(q.log, nowMillis);
            q.log.persistHead(false);
            q.log.removeIfDrained();
          }
          return null;
        },
        null);
  }

  /**
   * Bytes of every tenant's segment files on disk: the queued records, and what is left of
   * delivered ones in segments not removed yet.
   */
  public long diskBytes() {
    return totals.diskBytes();
  }

  /** On-disk bytes queued across all tenants. */
  public long bytes() {
    return totals.bytes();
  }

  /** Records queued across all tenants. */
  public long records() {
    return totals.records();
  }

  /** Series queued across all tenants. */
  public long series() {
    return totals.series();
  }

  /** Append time of the oldest record queued for any tenant, or empty when nothing is queued. */
  public OptionalLong oldestAppendMillis() {
    long oldest = Long.MAX_VALUE;
    for (FileTenantQueue q : queues.values()) {
      OptionalLong o = q.oldestAppendMillis();
      if (o.isPresent()) {
        oldest = Math.min(oldest, o.getAsLong());
      }
    }
    return oldest == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(oldest);
  }

  /** The queue directory. */
  public Path directory() {
    return dir;
  }

  /** The bounds in force. */
  public QueueLimits limits() {
    return limits;
  }

  /**
   * Writes and flushes the appends submitted before this call, flushes every head file, closes the
   * files and stops the I/O thread (waiting at most {@value #CLOSE_WAIT_SECONDS} s). Later calls
   * fail with an {@link IOException}. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      executor.execute(this::closeOnIoThread);
    } catch (RejectedExecutionException e) {
      // Already stopping.
    }
    executor.shutdown();
    if (Thread.currentThread() != ioThread) {
      try {
        if (!executor.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
          LOG.warning("queue I/O thread did not stop within " + CLOSE_WAIT_SECONDS + " s");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    syncers.shutdown();
    failPending(closedException());
    try {
      lock.release();
      lockChannel.close();
    } catch (IOException e) {
      LOG.log(Level.FINE, "cannot release queue directory lock", e);
    }
  }

  // ---------------------------------------------------------------- appends (group commit)

  CompletableFuture<TenantQueue.Position> append(
      FileTenantQueue q, ByteBuf payload, int series, boolean remoteWrite2, long nowMillis) {
    if (series < 0) {
      throw new IllegalArgumentException("series must not be negative: " + series);
    }
    if (closed.get()) {
      return CompletableFuture.failedFuture(closedException());
    }
    int payloadBytes = payload.readableBytes();
    long recordBytes = (long) RecordLayout.RECORD_HEADER_BYTES + payloadBytes;
    if (payloadBytes > RecordLayout.MAX_PAYLOAD_BYTES || recordBytes > limits.maxRecordBytes()) {
      return CompletableFuture.failedFuture(
          new IOException(
              "record of "
                  + recordBytes
                  + " bytes for tenant "
                  + q.tenant()
                  + " is larger than the queue bound of "
                  + limits.maxRecordBytes()
                  + " bytes"));
    }
    PendingAppend p =
        new PendingAppend(
            q.log,
            payload.retainedSlice(),
            RecordLayout.seriesField(series, remoteWrite2),
            nowMillis);
    pending.add(p);
    if (flushScheduled.compareAndSet(false, true)) {
      try {
        executor.execute(this::flush);
      } catch (RejectedExecutionException e) {
        // Closed meanwhile: handled below.
      }
    }
    if (closed.get() && pending.remove(p)) {
      // close() began after the check above; its last flush may have missed this append.
      p.fail(closedException());
    }
    return p.future;
  }

  /** Writes every pending append, flushes each touched segment once, then completes them all. */
  private void flush() {
    flushScheduled.set(false);
    List<PendingAppend> batch = new ArrayList<>();
    for (PendingAppend p; (p = pending.poll()) != null; ) {
      batch.add(p);
    }
    if (batch.isEmpty()) {
      return;
    }
    if (ioClosed) {
      batch.forEach(p -> p.fail(closedException()));
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
          t.failure = TenantLog.failure("cannot flush queue segment", s.path, t.forceError);
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
      makeRoom(p.log, recordBytes, p.nowMillis);
      Segment s = p.log.segmentFor(recordBytes, limits.segmentBytes());
      touched.computeIfAbsent(s, k -> new Touched(p.log, k.size));
      ByteBuffer[] payload =
          p.payload.nioBuffers(
              p.payload.readerIndex(), recordBytes - RecordLayout.RECORD_HEADER_BYTES);
      ByteBuffer[] sources = new ByteBuffer[payload.length + 1];
      System.arraycopy(payload, 0, sources, 1, payload.length);
      RecordLayout.putRecordHeader(recordHeader, crc, p.nowMillis, p.series, payload);
      sources[0] = recordHeader;
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

  /**
   * Drops old records so that a record of {@code recordBytes} fits every bound: first this tenant's
   * records past the age bound, then its oldest records over its byte bound, then, while all queues
   * together are over the total bound, the oldest records of the tenant holding the most bytes
   * (ties: the one with the oldest record). Taking from the largest queue keeps one tenant's
   * backlog from pushing out the few records of tenants that are healthy.
   */
  private void makeRoom(TenantLog log, int recordBytes, long nowMillis) {
    dropOld(log, nowMillis);
    TenantLog.DropTally tally = new TenantLog.DropTally();
    log.dropDownTo(limits.tenantMaxBytes() - recordBytes, tally);
    report(log, DropReason.BYTES, tally);
    long excess = totals.bytes() + recordBytes - limits.totalMaxBytes();
    if (excess <= 0) {
      return;
    }
    Map<TenantLog, TenantLog.DropTally> tallies = new HashMap<>();
    while (excess > 0) {
      TenantLog largest = null;
      long second = 0;
      for (FileTenantQueue q : queues.values()) {
        TenantLog l = q.log;
        if (l.records() == 0) {
          continue;
        }
        if (largest == null
            || l.bytes() > largest.bytes()
            || (l.bytes() == largest.bytes() && l.oldestMillis() < largest.oldestMillis())) {
          if (largest != null) {
            second = Math.max(second, largest.bytes());
          }
          largest = l;
        } else {
          second = Math.max(second, l.bytes());
        }
      }
      if (largest == null) {
        return;
      }
      long target = Math.min(Math.max(largest.bytes() - excess, second), largest.bytes() - 1);
      largest.dropDownTo(target, tallies.computeIfAbsent(largest, l -> new TenantLog.DropTally()));
      excess = totals.bytes() + recordBytes - limits.totalMaxBytes();
    }
    tallies.forEach((l, t) -> report(l, DropReason.TOTAL, t));
    tallies.keySet().forEach(l -> l.persistHead(false));
  }

  private void dropOld(TenantLog log, long nowMillis) {
    TenantLog.DropTally tally = new TenantLog.DropTally();
    log.dropOlderThan(nowMillis - limits.tenantMaxAge().toMillis(), tally);
    report(log, DropReason.AGE, tally);
  }

  private void report(TenantLog log, DropReason reason, TenantLog.DropTally tally) {
    if (tally.records == 0) {
      return;
    }
    try {
      listener.dropped(log.tenant, reason, tally.records, tally.series, tally.bytes);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "queue listener failed", e);
    }
  }

  private void failPending(IOException failure) {
    for (PendingAppend p; (p = pending.poll()) != null; ) {
      p.fail(failure);
    }
  }

  // ---------------------------------------------------------------- reads, acks, closing

  CompletableFuture<List<QueuedRecord>> read(
      FileTenantQueue q, int maxRecords, long maxBytes, ByteBufAllocator alloc) {
    return submit(
        () -> q.log.read(q, maxRecords, maxBytes, alloc),
        records -> records.forEach(r -> r.payload().release()));
  }

  CompletableFuture<Boolean> ackFrom(
      FileTenantQueue q, TenantQueue.Position first, TenantQueue.Position last) {
    return submit(
        () -> {
          if (q.log.headBefore(first.segmentId(), first.offset())) {
            return false;
          }
          q.log.ackThrough(last.segmentId(), last.offset());
          q.log.persistHead(false);
          return true;
        },
        null);
  }

  CompletableFuture<Void> ack(FileTenantQueue q, long segmentId, long offset) {
    return submit(
        () -> {
          q.log.ackThrough(segmentId, offset);
          q.log.persistHead(false);
          return null;
        },
        null);
  }

  /**
   * Runs {@code task} on the I/O thread.
   *
   * @param discard releases a result nobody can take any more (the future was cancelled)
   */
  private <T> CompletableFuture<T> submit(IoTask<T> task, Consumer<T> discard) {
    CompletableFuture<T> future = new CompletableFuture<>();
    if (closed.get()) {
      future.completeExceptionally(closedException());
      return future;
    }
    try {
      executor.execute(
          () -> {
            if (ioClosed) {
              future.completeExceptionally(closedException());
              return;
            }
            T result;
            try {
              result = task.run();
            } catch (IOException | RuntimeException e) {
              future.completeExceptionally(e);
              return;
            }
            if (!future.complete(result) && discard != null) {
              discard.accept(result);
            }
          });
    } catch (RejectedExecutionException e) {
      future.completeExceptionally(closedException());
    }
    return future;
  }

  private void closeOnIoThread() {
    flush();
    ioClosed = true;
    for (FileTenantQueue q : queues.values()) {
      q.log.close();
    }
  }

  private IOException closedException() {
    return new IOException("queue store " + dir + " is closed");
  }

  @FunctionalInterface
  private interface IoTask<T> {
    T run() throws IOException;
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
