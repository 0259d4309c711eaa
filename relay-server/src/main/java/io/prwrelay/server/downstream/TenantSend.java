package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.prwrelay.core.encode.SeriesCounts;

/**
 * One tenant's batch of one sender request, on its way downstream. Owns {@link #body()}
 * (snappy-compressed) until the send reaches its final outcome, when {@link Delivery} releases it
 * exactly once; each attempt borrows it.
 */
public final class TenantSend {
  private final String tenant;
  private ByteBuf body;
  private final SeriesCounts counts;
  private final int uncompressedBytes;
  int attempts;
  AttemptOutcome last;

  /**
   * @param body takes ownership
   * @param counts what the batch carries, for metrics and the sender's answer
   * @param uncompressedBytes size of the batch before compression
   */
  public TenantSend(String tenant, ByteBuf body, SeriesCounts counts, int uncompressedBytes) {
    this.tenant = tenant;
    this.body = body;
    this.counts = counts;
    this.uncompressedBytes = uncompressedBytes;
  }

  public String tenant() {
    return tenant;
  }

  /** The compressed batch; {@code null} once released. */
  public ByteBuf body() {
    return body;
  }

  /** Series, samples, exemplars and histograms of the batch. */
  public SeriesCounts counts() {
    return counts;
  }

  public int uncompressedBytes() {
    return uncompressedBytes;
  }

  /** Attempts made so far. */
  public int attempts() {
    return attempts;
  }

  /** Outcome of the last attempt, or {@code null} before the first. */
  public AttemptOutcome last() {
    return last;
  }

  /** The outcome as it stands: final once {@link DeliveryObserver#finished} was told. */
  public TenantOutcome outcome() {
    return new TenantOutcome(tenant, counts.series(), attempts, last);
  }

  void release() {
    if (body != null) {
      body.release();
      body = null;
    }
  }
}
