package io.prwrelay.server.queue;

import java.io.IOException;

/**
 * An append refused because its record would take a queue past a byte bound of {@link QueueLimits}
 * ({@link QueueFullPolicy#REFUSE}, or {@link QueueFullPolicy#DROP_OLDEST} when the tenant's own
 * records could not make room): nothing was queued, and nothing queued was dropped.
 */
public final class QueueFullException extends IOException {
  /** Which bound refused the record. */
  public enum Bound {
    /** {@link QueueLimits#tenantMaxBytes()}. */
    TENANT_BYTES("tenant-bytes"),
    /** {@link QueueLimits#totalMaxBytes()}. */
    TOTAL_BYTES("total-bytes");

    private final String label;

    Bound(String label) {
      this.label = label;
    }

    /**
     * The value used for this bound in metric labels: {@code tenant-bytes}, {@code total-bytes}.
     */
    public String label() {
      return label;
    }
  }

  private final String tenant;
  private final Bound bound;
  private final long limit;
  private final long queued;

  QueueFullException(String tenant, Bound bound, long limit, long queued, long recordBytes) {
    super(
        (bound == Bound.TENANT_BYTES
                ? "the queue of tenant " + tenant + " holds "
                : "all tenants' queues hold ")
            + queued
            + " bytes; a record of "
            + recordBytes
            + " more would pass the bound of "
            + limit
            + " bytes");
    this.tenant = tenant;
    this.bound = bound;
    this.limit = limit;
    this.queued = queued;
  }

  /** No stack trace: a refusal is an answer, made for every record while a queue is full. */
  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }

  /** The tenant whose record was refused. */
  public String tenant() {
    return tenant;
  }

  /** The bound that refused it. */
  public Bound bound() {
    return bound;
  }

  /** The bound in bytes. */
  public long limit() {
    return limit;
  }

  /** Bytes queued (of the tenant, or of all tenants) when the record was refused. */
  public long queued() {
    return queued;
  }
}
