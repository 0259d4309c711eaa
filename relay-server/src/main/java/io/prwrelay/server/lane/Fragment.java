package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.prwrelay.core.encode.SeriesCounts;

/**
 * One tenant's share of one sender request, on its way through that tenant's {@link Lane}.
 *
 * <p>Owns {@link #body()}, an uncompressed WriteRequest holding only this tenant's series, until
 * the fragment's outcome is known; the lane releases it then, exactly once, before telling the
 * {@link Listener}. Fragments of the same tenant may travel downstream together in one coalesced
 * request, but each fragment's outcome is reported to its own listener.
 */
public final class Fragment {
  /** Told the outcome of a fragment, once, on the lane's event loop. */
  public interface Listener {
    void done(Fragment fragment, FragmentOutcome outcome);
  }

  private final String tenant;
  private ByteBuf body;
  private final int size;
  private final SeriesCounts counts;
  private final long deadlineNanos;
  private final Listener listener;
  int attempts;
  long queuedNanos;

  /**
   * @param body takes ownership
   * @param deadlineNanos ticker time by which the outcome must be known
   */
  public Fragment(
      String tenant, ByteBuf body, SeriesCounts counts, long deadlineNanos, Listener listener) {
    this.tenant = tenant;
    this.body = body;
    this.size = body.readableBytes();
    this.counts = counts;
    this.deadlineNanos = deadlineNanos;
    this.listener = listener;
  }

  public String tenant() {
    return tenant;
  }

  /** The uncompressed batch, or {@code null} once the outcome is known. */
  public ByteBuf body() {
    return body;
  }

  /** Uncompressed bytes of the batch. */
  public int size() {
    return size;
  }

  public SeriesCounts counts() {
    return counts;
  }

  public long deadlineNanos() {
    return deadlineNanos;
  }

  /** Releases the body and tells the listener; called once by the lane. */
  void complete(FragmentOutcome outcome) {
    if (body != null) {
      body.release();
      body = null;
    }
    listener.done(this, outcome);
  }
}
