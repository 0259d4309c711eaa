package io.prwrelay.server.queue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One tenant's queue as its lane uses it in queue mode: append batches, read them back from the
 * head in order without consuming them, acknowledge what was delivered. {@link FileTenantQueue}
 * keeps the records on disk (what the relay runs); the tests' in-memory twin keeps them in memory
 * and completes every operation on an event loop, so that a lane's decisions can be tested in
 * simulated time.
 *
 * <p>Each operation answers with a future, completed on a thread of the implementation's choosing
 * (the store's I/O thread for the file queue): callers hop to their own event loop before acting on
 * the answer. {@link #isEmpty()} and {@link #records()} may be read from any thread and say what
 * the completed operations left: an append counts once its future completes, an acknowledgement
 * once it is done.
 *
 * <p>Delivery is at-least-once: a record read and not acknowledged is read again, also after a
 * restart when the queue survives it.
 */
public interface TenantQueue {
  /** The tenant ID. */
  String tenant();

  /** True when nothing is queued. */
  boolean isEmpty();

  /** Records queued. */
  long records();

  /**
   * Whether this queue has had its storage since its store opened: found when the store opened, or
   * made by an append since (and still true after a drained queue's files are removed, until the
   * store {@linkplain TenantQueues#release forgets} the queue with its tenant's lane). The first
   * append to a queue that has not makes that storage, which for the file queue is a directory, two
   * files and a segment, each flushed: the lanes bound how many such appends one request and one
   * second may start. Readable from any thread.
   */
  boolean created();

  /**
   * Appends a record and says where it lies, for {@link #ackFrom}.
   *
   * @param payload borrowed: the queue keeps the readable bytes (a reference or a copy) until they
   *     are stored, so the caller may release its reference at once but must not change those bytes
   *     until the returned future completes
   * @param series series in the payload, reported back on reads
   * @param remoteWrite2 whether the payload is a Remote Write 2.0 request (else 1.0), said back by
   *     {@link QueuedRecord#remoteWrite2()}
   * @param nowMillis wall-clock time of the append, kept with the record for the age bound
   * @return completed with the record's position once it is stored (for the file queue: on the
   *     device), or exceptionally with an {@link java.io.IOException} naming what refused it; the
   *     record is then not queued
   */
  CompletableFuture<Position> appendAt(
      ByteBuf payload, int series, boolean remoteWrite2, long nowMillis);

  /**
   * Reads records from the head, in append order, without consuming them; reading again before
   * acknowledging returns the same records.
   *
   * @param maxRecords at most this many records (at least 1)
   * @param maxBytes at most this many payload bytes, except that the first record is returned
   *     whatever its size
   * @param alloc allocates the payload buffers, which the caller then owns
   * @return the records (empty when the queue is), or an {@link java.io.IOException} when they
   *     cannot be read
   */
  CompletableFuture<List<QueuedRecord>> read(int maxRecords, long maxBytes, ByteBufAllocator alloc);

  /**
   * Consumes every record up to and including the latest of {@code records} (acknowledgement is
   * cumulative, in queue order). Records that were dropped in the meantime are skipped. Payloads
   * are not touched.
   *
   * @param records records read from this queue
   */
  CompletableFuture<Void> ack(List<QueuedRecord> records);

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
  CompletableFuture<Boolean> ackFrom(Position first, Position last);

  /**
   * Where a record lies in its queue: the segment and the byte offset of its header (for the file
   * queue; a twin numbers its records in order).
   *
   * @param segmentId the segment file's number
   * @param offset the record's offset in that segment
   */
  record Position(long segmentId, long offset) {}
}
