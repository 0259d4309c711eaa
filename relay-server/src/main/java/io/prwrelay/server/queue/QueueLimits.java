package io.prwrelay.server.queue;

import java.time.Duration;

/**
 * Sizes and bounds of a {@link QueueStore}, immutable. Byte bounds count on-disk record bytes
 * (payload plus the {@value RecordLayout#RECORD_HEADER_BYTES}-byte record header).
 *
 * @param segmentBytes a segment rolls over when the next record would take it past this size; a
 *     record larger than this gets a segment of its own. Default {@link #DEFAULT_SEGMENT_BYTES}.
 * @param tenantMaxBytes most bytes one tenant's queue holds. Default {@link
 *     #DEFAULT_TENANT_MAX_BYTES}.
 * @param tenantMaxAge records older than this are dropped ({@link DropReason#AGE}) on the tenant's
 *     next append and on {@link QueueStore#expire}. Default {@link #DEFAULT_TENANT_MAX_AGE}.
 * @param totalMaxBytes most bytes all queues hold together. Default {@link
 *     #DEFAULT_TOTAL_MAX_BYTES}.
 * @param fullPolicy what an append does that would pass {@code tenantMaxBytes} or {@code
 *     totalMaxBytes}: refused by default, never dropping what was queued; under {@link
 *     QueueFullPolicy#DROP_OLDEST} the tenant's own oldest records make room ({@link
 *     DropReason#BYTES}, {@link DropReason#TOTAL}), never another tenant's.
 */
public record QueueLimits(
    long segmentBytes,
    long tenantMaxBytes,
    Duration tenantMaxAge,
    long totalMaxBytes,
    QueueFullPolicy fullPolicy) {
  /** 16 MiB: large enough that rolling is rare, small enough that a consumed segment frees soon. */
  public static final long DEFAULT_SEGMENT_BYTES = 16L << 20;

  /** 1 GiB per tenant. */
  public static final long DEFAULT_TENANT_MAX_BYTES = 1L << 30;

  /** 6 hours: Cortex and Mimir reject samples much older than that anyway. */
  public static final Duration DEFAULT_TENANT_MAX_AGE = Duration.ofHours(6);

  /** 8 GiB across all tenants. */
  public static final long DEFAULT_TOTAL_MAX_BYTES = 8L << 30;

  /** Smallest accepted {@code segmentBytes}. */
  public static final long MIN_SEGMENT_BYTES = 64;

  /** The defaults above. */
  public static final QueueLimits DEFAULTS =
      new QueueLimits(
          DEFAULT_SEGMENT_BYTES,
          DEFAULT_TENANT_MAX_BYTES,
          DEFAULT_TENANT_MAX_AGE,
          DEFAULT_TOTAL_MAX_BYTES,
          QueueFullPolicy.REFUSE);

  /** Bounds that refuse a record past a byte bound ({@link QueueFullPolicy#REFUSE}). */
  public QueueLimits(
      long segmentBytes, long tenantMaxBytes, Duration tenantMaxAge, long totalMaxBytes) {
    this(segmentBytes, tenantMaxBytes, tenantMaxAge, totalMaxBytes, QueueFullPolicy.REFUSE);
  }

  /** Checks every bound. */
  public QueueLimits {
    if (segmentBytes < MIN_SEGMENT_BYTES || segmentBytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "segmentBytes must be between " + MIN_SEGMENT_BYTES + " and 2 GiB: " + segmentBytes);
    }
    if (tenantMaxBytes <= 0) {
      throw new IllegalArgumentException("tenantMaxBytes must be positive: " + tenantMaxBytes);
    }
    if (totalMaxBytes <= 0) {
      throw new IllegalArgumentException("totalMaxBytes must be positive: " + totalMaxBytes);
    }
    if (tenantMaxAge == null || tenantMaxAge.isNegative() || tenantMaxAge.isZero()) {
      throw new IllegalArgumentException("tenantMaxAge must be positive: " + tenantMaxAge);
    }
    if (fullPolicy == null) {
      throw new IllegalArgumentException("fullPolicy must be given");
    }
  }

  /** A copy with another {@code segmentBytes}. */
  public QueueLimits withSegmentBytes(long value) {
    return new QueueLimits(value, tenantMaxBytes, tenantMaxAge, totalMaxBytes, fullPolicy);
  }

  /** A copy with another {@code tenantMaxBytes}. */
  public QueueLimits withTenantMaxBytes(long value) {
    return new QueueLimits(segmentBytes, value, tenantMaxAge, totalMaxBytes, fullPolicy);
  }

  /** A copy with another {@code tenantMaxAge}. */
  public QueueLimits withTenantMaxAge(Duration value) {
    return new QueueLimits(segmentBytes, tenantMaxBytes, value, totalMaxBytes, fullPolicy);
  }

  /** A copy with another {@code totalMaxBytes}. */
  public QueueLimits withTotalMaxBytes(long value) {
    return new QueueLimits(segmentBytes, tenantMaxBytes, tenantMaxAge, value, fullPolicy);
  }

  /** A copy with another {@code fullPolicy}. */
  public QueueLimits withFullPolicy(QueueFullPolicy value) {
    return new QueueLimits(segmentBytes, tenantMaxBytes, tenantMaxAge, totalMaxBytes, value);
  }

  /** The largest record a queue accepts: one that fits both byte bounds. */
  long maxRecordBytes() {
    return Math.min(tenantMaxBytes, totalMaxBytes);
  }
}
