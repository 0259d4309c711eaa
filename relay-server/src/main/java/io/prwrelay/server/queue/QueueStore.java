package io.prwrelay.server.queue;

import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.WRITE;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.route.TenantIds;
import io.prwrelay.core.route.TenantProblem;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The on-disk queues of queue mode: one {@link FileTenantQueue} per tenant under one directory,
 * their bounds, and the one I/O thread that does all their file work.
 *
 * <p>Layout: {@code <dir>/lock} (held while open, so two relays never share a directory) and one
 * directory per tenant, named by {@link TenantDirNames}, holding {@code tenant} (the tenant ID, so
 * replay does not depend on decoding names), {@code head} ({@link HeadFile}) and the segments
 * {@code <16-digit id>.seg} ({@link RecordLayout}).
 *
 * <p>Nothing here blocks the caller: appends are handed to the I/O thread ({@link IoThread}), which
 * writes every append waiting at that moment, flushes each segment it touched once, and only then
 * completes their futures ({@link GroupCommit}). Reads, acknowledgements and expiry ({@link
 * Retention}) run on the same thread, in submission order.
 *
 * <p>State: the directory lock, held from {@link #open} to {@link #close()}, and the tenants'
 * queues (every one replayed by {@link QueueRecovery}, then one more per new tenant; one that holds
 * nothing and has no files is forgotten with its tenant's lane, {@link #release}). Bound: a queue
 * per tenant with a lane ({@code relay.lanes.max}) or with records or files on disk (about 1 KiB
 * each with the tenant ID). The totals across them are {@link QueueTotals}.
 */
public final class QueueStore implements TenantQueues, AutoCloseable {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.queue");

  /** Queues checked by one task of the periodic check ({@link #expire}). */
  static final int EXPIRE_CHUNK = 16;

  private final Path dir;
  private final QueueLimits limits;
  private final StoreContext context;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final Map<String, FileTenantQueue> queues = new ConcurrentHashMap<>();
  private final IoThread ioThread;
  private final Retention retention;
  private final GroupCommit commits;

  private QueueStore(
      Path dir,
      QueueLimits limits,
      QueueListener listener,
      SegmentIo io,
      FileChannel lockChannel,
      FileLock lock) {
    this.dir = dir;
    this.limits = limits;
    this.lockChannel = lockChannel;
    this.lock = lock;
    QueueTotals totals = new QueueTotals();
    RecordCodec codec = new RecordCodec();
    this.context = new StoreContext(dir, io, totals, listener, codec);
    this.ioThread = new IoThread(dir);
    this.retention = new Retention(limits, totals, listener);
    this.commits = new GroupCommit(ioThread, retention, limits, io, codec);
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
      throw SegmentIo.failure("cannot create queue directory", dir, e);
    }
    FileChannel lockChannel;
    try {
      lockChannel = FileChannel.open(dir.resolve(RecordLayout.LOCK_FILE), CREATE, WRITE);
    } catch (IOException e) {
      throw SegmentIo.failure("cannot write in queue directory", dir, e);
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
      QueueRecovery.replay(store.context)
          .forEach((tenant, log) -> store.queues.put(tenant, new FileTenantQueue(store, log)));
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
        tenant, t -> new FileTenantQueue(this, TenantLog.create(t, context)));
  }

  /**
   * Forgets the queue of {@code tenant} when it holds nothing and has no files; its next lane gets
   * a new one, which counts as not {@linkplain TenantQueue#created() created}. Safe because the
   * tenant's lane, gone, was the only one to append to it, and {@link #queue} for the tenant runs
   * on the same loop as this.
   */
  @Override
  public void release(String tenant) {
    FileTenantQueue q = queues.get(tenant);
    if (q != null && q.log.vacant()) {
      queues.remove(tenant, q);
    }
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
    List<FileTenantQueue> all = List.copyOf(queues.values());
    CompletableFuture<Void> done = new CompletableFuture<>();
    expireFrom(all, 0, nowMillis, done);
    return done;
  }

  /**
   * Checks {@value #EXPIRE_CHUNK} queues from {@code from} in one task of the I/O thread, then
   * queues the next chunk behind the work that came meanwhile: removing thousands of drained
   * queues' files (a few flushes each) never holds other tenants' appends for more than a chunk.
   */
  private void expireFrom(
      List<FileTenantQueue> all, int from, long nowMillis, CompletableFuture<Void> done) {
    int to = Math.min(all.size(), from + EXPIRE_CHUNK);
    ioThread
        .submit(
            () -> {
              retention.expire(all.subList(from, to), nowMillis);
              return null;
            },
            null)
        .whenComplete(
            (ok, error) -> {
              if (error != null) {
                done.completeExceptionally(error);
              } else if (to == all.size()) {
                done.complete(null);
              } else {
                expireFrom(all, to, nowMillis, done);
              }
            });
  }

  /**
   * Bytes of every tenant's segment files on disk: the queued records, and what is left of
   * delivered ones in segments not removed yet.
   */
  public long diskBytes() {
    return context.totals().diskBytes();
  }

  /** On-disk bytes queued across all tenants. */
  public long bytes() {
    return context.totals().bytes();
  }

  /** Records queued across all tenants. */
  public long records() {
    return context.totals().records();
  }

  /** Series queued across all tenants. */
  public long series() {
    return context.totals().series();
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
   * files and stops the I/O thread (waiting at most {@value IoThread#CLOSE_WAIT_SECONDS} s). Later
   * calls fail with an {@link IOException}. Idempotent.
   */
  @Override
  public void close() {
    if (!ioThread.close(this::closeOnIoThread)) {
      return;
    }
    commits.close();
    try {
      lock.release();
      lockChannel.close();
    } catch (IOException e) {
      LOG.log(Level.FINE, "cannot release queue directory lock", e);
    }
  }

  private void closeOnIoThread() {
    commits.flushLast();
    for (FileTenantQueue q : queues.values()) {
      q.log.close();
    }
  }

  // ---------------------------------------------------------------- the operations of a queue

  CompletableFuture<TenantQueue.Position> append(
      FileTenantQueue q, ByteBuf payload, int series, boolean remoteWrite2, long nowMillis) {
    return commits.append(q.log, payload, series, remoteWrite2, nowMillis);
  }

  CompletableFuture<List<QueuedRecord>> read(
      FileTenantQueue q, int maxRecords, long maxBytes, ByteBufAllocator alloc) {
    return ioThread.submit(
        () -> q.log.read(q, maxRecords, maxBytes, alloc),
        records -> records.forEach(r -> r.payload().release()));
  }

  CompletableFuture<Boolean> ackFrom(
      FileTenantQueue q, TenantQueue.Position first, TenantQueue.Position last) {
    return ioThread.submit(
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
    return ioThread.submit(
        () -> {
          q.log.ackThrough(segmentId, offset);
          q.log.persistHead(false);
          return null;
        },
        null);
  }
}
