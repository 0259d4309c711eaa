package io.prwrelay.server.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The one body timer of an ingress connection: a request's body must be complete within the read
 * timeout from its head. Armed when a body begins and none is armed, it fires at or before the
 * current body's deadline and re-arms itself for what is left when that body began later than the
 * one it was armed for: a timer per connection, not a scheduled task per request.
 *
 * <p>Used on the connection's event loop only.
 */
final class BodyTimer {
  private final ChannelHandlerContext ctx;
  private final BooleanSupplier receiving;
  private final Runnable timedOut;
  private final Runnable task = this::fired;

  /** When the current body must be complete, on the loop's ticker. */
  private long deadline;

  private ScheduledFuture<?> timer;

  /**
   * @param receiving whether a body is being received now
   * @param timedOut runs when a body is still being received at its deadline
   */
  BodyTimer(ChannelHandlerContext ctx, BooleanSupplier receiving, Runnable timedOut) {
    this.ctx = ctx;
    this.receiving = receiving;
    this.timedOut = timedOut;
  }

  /** A body begins: it must be complete within {@code timeoutNanos} from now. */
  void arm(long timeoutNanos) {
    deadline = ctx.executor().ticker().nanoTime() + timeoutNanos;
    if (timer == null) {
      timer = ctx.executor().schedule(task, timeoutNanos, TimeUnit.NANOSECONDS);
    }
  }

  /** The connection is gone: nothing fires. */
  void cancel() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }

  private void fired() {
    timer = null;
    if (!receiving.getAsBoolean()) {
      return; // the next body arms it again
    }
    long left = deadline - ctx.executor().ticker().nanoTime();
    if (left > 0) {
      // Armed for an earlier body: this one began later.
      timer = ctx.executor().schedule(task, left, TimeUnit.NANOSECONDS);
    } else {
      timedOut.run();
    }
  }
}
