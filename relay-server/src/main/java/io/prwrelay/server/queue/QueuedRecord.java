package io.prwrelay.server.queue;

import io.netty.buffer.ByteBuf;

/**
 * One record read from a tenant queue: the payload that was appended, its append time and series
 * count, and its position in the queue (used by {@link TenantQueue#ack}).
 *
 * <p>The caller owns {@link #payload()} and releases it exactly once, whether or not it
 * acknowledges the record; acknowledging never touches the payload.
 */
public final class QueuedRecord {
  private final TenantQueue queue;
  private final long segmentId;
  private final long offset;
  private final long appendMillis;
  private final int series;
  private final boolean remoteWrite2;
  private final ByteBuf payload;

  QueuedRecord(
      TenantQueue queue,
      long segmentId,
      long offset,
      long appendMillis,
      int series,
      boolean remoteWrite2,
      ByteBuf payload) {
    this.remoteWrite2 = remoteWrite2;
    this.queue = queue;
    this.segmentId = segmentId;
    this.offset = offset;
    this.appendMillis = appendMillis;
    this.series = series;
    this.payload = payload;
  }

  /** The queue this record was read from. */
  public TenantQueue queue() {
    return queue;
  }

  /** Wall-clock milliseconds given to {@link TenantQueue#append} for this record. */
  public long appendMillis() {
    return appendMillis;
  }

  /** Series count given to {@link TenantQueue#append} for this record. */
  public int series() {
    return series;
  }

  /** Whether the payload is a Remote Write 2.0 request (else 1.0), as given to append. */
  public boolean remoteWrite2() {
    return remoteWrite2;
  }

  /** The payload bytes as appended (readable bytes), owned by the caller: release once. */
  public ByteBuf payload() {
    return payload;
  }

  long segmentId() {
    return segmentId;
  }

  long offset() {
    return offset;
  }

  /** True when this record lies after {@code other} in its queue. */
  boolean isAfter(QueuedRecord other) {
    return segmentId != other.segmentId ? segmentId > other.segmentId : offset > other.offset;
  }

  @Override
  public String toString() {
    return queue.tenant()
        + "@"
        + segmentId
        + ":"
        + offset
        + " ("
        + payload.readableBytes()
        + " bytes, "
        + series
        + " series)";
  }
}
