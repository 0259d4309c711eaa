package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;

/**
 * One tenant's batch of one sender request, on its way downstream. Owns {@link #body()}
 * (snappy-compressed) until the send reaches its final outcome, when {@link RequestDelivery}
 * releases it exactly once; retries write retained duplicates.
 */
public final class TenantSend {
  private final String tenant;
  private ByteBuf body;
  private final int series;
  private final long samples;
  private final long histograms;
  private final long exemplars;
  private final int uncompressedBytes;
  int attempts;
  AttemptOutcome last;
  boolean done;

  /**
   * @param body takes ownership
   */
  public TenantSend(
      String tenant,
      ByteBuf body,
      int series,
      long samples,
      long histograms,
      long exemplars,
      int uncompressedBytes) {
    this.tenant = tenant;
    this.body = body;
    this.series = series;
    this.samples = samples;
    this.histograms = histograms;
    this.exemplars = exemplars;
    this.uncompressedBytes = uncompressedBytes;
  }

  public String tenant() {
    return tenant;
  }

  /** The compressed batch; {@code null} once released. */
  public ByteBuf body() {
    return body;
  }

  public int series() {
    return series;
  }

  public long samples() {
    return samples;
  }

  public long histograms() {
    return histograms;
  }

  public long exemplars() {
    return exemplars;
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

  void release() {
    if (body != null) {
      body.release();
      body = null;
    }
  }
}
