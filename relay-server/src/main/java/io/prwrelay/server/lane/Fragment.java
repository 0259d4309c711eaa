package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.downstream.Protocol;

/**
 * One tenant's share of one sender request, on its way through that tenant's {@link Lane}.
 *
 * <p>Owns {@link #body()}, an uncompressed request of {@link #protocol()} (a PRW 1.0 {@code
 * WriteRequest}, or a PRW 2.0 {@code Request} with its own symbols table) holding only this
 * tenant's series, until the fragment's outcome is known; the lane releases it then, exactly once,
 * before telling the {@link Listener}. Fragments of the same tenant may travel downstream together
 * in one coalesced request, but each fragment's outcome is reported to its own listener.
 */
public final class Fragment {
  /** Told the outcome of a fragment, once, on the lane's event loop. */
  public interface Listener {
    void done(Fragment fragment, FragmentOutcome outcome);
  }

  private final String tenant;
  private ByteBuf body;
  private Protocol protocol;
  private int size;
  private final SeriesCounts counts;
  private final long deadlineNanos;
  private final Listener listener;
  int attempts;
  long queuedNanos;

  /**
   * A PRW 1.0 fragment.
   *
   * @param body takes ownership
   * @param deadlineNanos ticker time by which the outcome must be known
   */
  public Fragment(
      String tenant, ByteBuf body, SeriesCounts counts, long deadlineNanos, Listener listener) {
    this(tenant, Protocol.V1, body, counts, deadlineNanos, listener);
  }

  /**
   * @param protocol the message {@code body} holds
   * @param body takes ownership
   * @param deadlineNanos ticker time by which the outcome must be known
   */
  public Fragment(
      String tenant,
      Protocol protocol,
      ByteBuf body,
      SeriesCounts counts,
      long deadlineNanos,
      Listener listener) {
    this.tenant = tenant;
    this.protocol = protocol;
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

  /** The message {@link #body()} holds. */
  public Protocol protocol() {
    return protocol;
  }

  /**
   * Replaces a PRW 2.0 body by its PRW 1.0 conversion (the old body is released).
   *
   * @param v1 takes ownership
   */
  void convertedToV1(ByteBuf v1) {
    body.release();
    body = v1;
    size = v1.readableBytes();
    protocol = Protocol.V1;
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
