package io.prwrelay.server.queue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * One tenant's on-disk queue: the {@link TenantQueue} of a {@link QueueStore}, with the counters
 * the metrics read. Get it from {@link QueueStore#queue(String)}.
 *
 * <p>Every operation runs on the store's I/O thread and answers with a future completed there:
 * callbacks must be short and must not block (hop to an event loop with {@code *Async(..,
 * eventLoop)} for real work). The counters ({@link #bytes()}, {@link #records()}, ...) can be read
 * from any thread at any time; each is current, but two of them read one after the other need not
 * describe the same instant.
 *
 * <p>Delivery is at-least-once: the head is persisted without a flush on every acknowledgement and
 * flushed on close, so after a crash records acknowledged shortly before it can be read again.
 */
public final class FileTenantQueue implements TenantQueue {
  private final QueueStore store;
  final TenantLog log;

  FileTenantQueue(QueueStore store, TenantLog log) {
    this.store = store;
    this.log = log;
  }

  /** Bytes of this tenant's segment files on disk (0 once a drained queue was removed). */
  public long diskBytes() {
    return log.diskBytes();
  }

  /** The tenant ID. */
  @Override
  public String tenant() {
    return log.tenant;
  }

  /**
   * Appends a record: written, then flushed to the device ({@code fsync}) together with every other
   * append waiting at that moment (group commit). A record past a byte bound of {@link QueueLimits}
   * is refused ({@link QueueFullException}); under {@link QueueFullPolicy#DROP_OLDEST} this
   * tenant's own older records are dropped first to make room (reported to the {@link
   * QueueListener}).
   *
   * @param payload borrowed: the queue keeps its own reference to the readable bytes (a retained
   *     slice) until they are written, so the caller may release its reference at once but must not
   *     change those bytes until the returned future completes
   * @param series series in the payload, reported back on reads and drops
   * @param nowMillis wall-clock time of the append ({@link System#currentTimeMillis()}), kept with
   *     the record for the age bound, so ages keep counting across restarts
   * @return completed after the record is on the device; completed exceptionally with an {@link
   *     java.io.IOException} naming the file or directory when it could not be written or flushed
   *     (full or unwritable disk), when the record is larger than a byte bound or the queues are
   *     full ({@link QueueFullException}), or when the store is closed. The record is then not
   *     queued (not readable, not counted); only if the disk refused even to cut the failed write
   *     back can a restart find it and deliver it, as a duplicate of the sender's retry, never as a
   *     loss
   */
  public CompletableFuture<Void> append(ByteBuf payload, int series, long nowMillis) {
    return store.append(this, payload, series, false, nowMillis).thenApply(p -> null);
  }

  /**
   * Appends a record as {@link #append(ByteBuf, int, long)} does, marked with the protocol of its
   * payload: {@link QueuedRecord#remoteWrite2()} says it back on reads.
   *
   * @param payload borrowed, as in {@link #append(ByteBuf, int, long)}
   * @param remoteWrite2 whether the payload is a Remote Write 2.0 request (else 1.0)
   */
  public CompletableFuture<Void> append(
      ByteBuf payload, int series, boolean remoteWrite2, long nowMillis) {
    return store.append(this, payload, series, remoteWrite2, nowMillis).thenApply(p -> null);
  }

  /**
   * Appends a record as {@link #append(ByteBuf, int, boolean, long)} does and says where it lies,
   * for {@link #ackFrom}.
   *
   * @param payload borrowed, as in {@link #append(ByteBuf, int, long)}
   * @return completed with the record's position once it is on the device, or exceptionally as
   *     {@link #append(ByteBuf, int, long)}'s
   */
  @Override
  public CompletableFuture<Position> appendAt(
      ByteBuf payload, int series, boolean remoteWrite2, long nowMillis) {
    return store.append(this, payload, series, remoteWrite2, nowMillis);
  }

  /**
   * Consumes the records from {@code first} through {@code last}, which the caller delivered by
   * other means than reading them, but only when no record before {@code first} is still queued:
   * acknowledgement is cumulative, and an older record that was not delivered must not be consumed
   * with them. Records between them that were dropped in the meantime are skipped.
   *
   * @param first position of the first record, as {@link #appendAt} said
   * @param last position of the last record (may be {@code first})
   * @return true when consumed (or already gone); false when an older record is still queued, in
   *     which case the records stay and will be read and sent again
   */
  @Override
  public CompletableFuture<Boolean> ackFrom(Position first, Position last) {
    return store.ackFrom(this, first, last);
  }

  /**
   * Reads records from the head, in append order, without consuming them; reading again before
   * acknowledging returns the same records.
   *
   * @param maxRecords at most this many records (at least 1)
   * @param maxBytes at most this many payload bytes, except that the first record is returned
   *     whatever its size
   * @param alloc allocates the payload buffers, which the caller then owns
   * @return the records (empty when the queue is), or an {@link java.io.IOException} when the files
   *     cannot be read
   */
  @Override
  public CompletableFuture<List<QueuedRecord>> read(
      int maxRecords, long maxBytes, ByteBufAllocator alloc) {
    if (maxRecords < 1) {
      throw new IllegalArgumentException("maxRecords must be at least 1: " + maxRecords);
    }
    return store.read(this, maxRecords, maxBytes, alloc);
  }

  /**
   * Consumes every record up to and including the latest of {@code records} (acknowledgement is
   * cumulative, in queue order). Records that were dropped in the meantime are skipped. Payloads
   * are not touched.
   *
   * @param records records read from this queue
   */
  @Override
  public CompletableFuture<Void> ack(List<QueuedRecord> records) {
    QueuedRecord last = null;
    for (QueuedRecord r : records) {
      if (r.queue() != this) {
        throw new IllegalArgumentException(
            "record of tenant " + r.queue().tenant() + " acknowledged on the queue of " + tenant());
      }
      if (last == null || r.isAfter(last)) {
        last = r;
      }
    }
    if (last == null) {
      return CompletableFuture.completedFuture(null);
    }
    return store.ack(this, last.segmentId(), last.offset());
  }

  /** On-disk bytes queued (payloads plus record headers). */
  public long bytes() {
    return log.bytes();
  }

  /** Records queued. */
  @Override
  public long records() {
    return log.records();
  }

  /** Series in the queued records. */
  public long series() {
    return log.series();
  }

  @Override
  public boolean created() {
    return log.created();
  }

  /** True when nothing is queued. */
  @Override
  public boolean isEmpty() {
    return log.records() == 0;
  }

  /** Append time of the oldest queued record, or empty when nothing is queued. */
  public OptionalLong oldestAppendMillis() {
    long oldest = log.oldestMillis();
    return log.records() == 0 ? OptionalLong.empty() : OptionalLong.of(oldest);
  }

  /** Age of the oldest queued record at {@code nowMillis} (0 when nothing is queued). */
  public long oldestAgeMillis(long nowMillis) {
    long oldest = log.oldestMillis();
    return log.records() == 0 ? 0 : Math.max(0, nowMillis - oldest);
  }

  @Override
  public String toString() {
    return "queue of " + tenant() + " (" + records() + " records, " + bytes() + " bytes)";
  }
}
