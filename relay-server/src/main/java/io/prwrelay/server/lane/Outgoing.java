package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.FutureListener;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.protocol.Protocol;
import java.util.ArrayList;

/**
 * One downstream request of fragments held in memory, from a {@link Lane} or a {@link Delegate}:
 * its fragments, in order, its body, the connection of the loop it holds, and the listener of its
 * answer. A list and a listener per send showed in the allocation profile; this is both.
 *
 * <p>The owner adds the fragments, {@linkplain #build builds} the body (each fragment compressed
 * once, {@link RequestBody#of}) and {@linkplain #send sends} it: every fragment counts the attempt,
 * the send takes one of the loop's {@link SendSlots}. When the answer comes, on the loop, the body
 * is released, the owner decides the fragments' fate ({@link Owner#answered}), and only then is the
 * connection given back, so that the lanes waiting for one find the owner's state settled. Touched
 * only on the loop.
 */
final class Outgoing extends ArrayList<Fragment> implements FutureListener<AttemptOutcome> {
  /** What sent the request, told its answer. */
  interface Owner {
    /**
     * The downstream's answer {@code o} to {@code send}, whose body is released; the connection is
     * given back when this returns.
     */
    void answered(Outgoing send, AttemptOutcome o);

    /** After {@link #answered}, once the connection is given back ({@link SendSlots#release}). */
    default void connectionFreed() {}
  }

  private final Owner owner;
  private final SendSlots slots;

  /** Whether the send took its connection as an unproven lane's ({@link SendSlots}). */
  private final boolean unproven;

  /** The message the fragments hold. */
  final Protocol protocol;

  /** Ticker time the request was made. */
  final long started;

  /** The request body from {@link #build} until the answer comes. */
  private ByteBuf body;

  /** Queue mode: the lane's direct send this is ({@link DirectSpill}), or {@code null}. */
  DirectSpill.Send spill;

  /**
   * @param slots the connections of the owner's loop
   * @param unproven the send is an unproven lane's: it takes one of the connections unproven lanes
   *     share
   */
  Outgoing(
      int capacity,
      Protocol protocol,
      long started,
      Owner owner,
      SendSlots slots,
      boolean unproven) {
    super(capacity);
    this.protocol = protocol;
    this.started = started;
    this.owner = owner;
    this.slots = slots;
    this.unproven = unproven;
  }

  /**
   * Builds the request body of the fragments added. On failure (memory running out) what was made
   * for it is released and the exception propagates; the fragments are unchanged.
   */
  void build(LaneContext ctx) {
    body = RequestBody.of(this, ctx.alloc);
  }

  /**
   * Counts an attempt on every fragment, takes a connection of the loop and sends the body built,
   * answered within {@code timeoutNanos}.
   */
  void send(LaneContext ctx, EventLoop loop, String tenant, long timeoutNanos) {
    // Indexed loops over batches: an iterator per loop and send showed in the allocation profile.
    for (int i = 0; i < size(); i++) {
      get(i).attempted();
    }
    slots.take(unproven);
    ctx.sender
        .send(loop, tenant, protocol, Fragment.retryAttempt(this), body, timeoutNanos)
        .addListener(this);
  }

  @Override
  public void operationComplete(Future<AttemptOutcome> result) {
    body.release();
    body = null;
    try {
      owner.answered(this, result.getNow());
    } finally {
      slots.release(unproven);
    }
    owner.connectionFreed();
  }

  /**
   * True when {@code o} rejected a request of {@code fragments} as a whole: a non-retriable 4xx to
   * several fragments that is not a tenant's limit, so that the lane sends them again in halves
   * ({@link Bisection}) to find the bad ones.
   */
  static boolean rejectedAsAWhole(AttemptOutcome o, int fragments) {
    return !o.success() && !o.retriable() && fragments > 1 && !o.overTenantLimit();
  }
}
