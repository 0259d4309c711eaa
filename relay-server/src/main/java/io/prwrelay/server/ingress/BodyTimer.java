package io.prwrelay.server.ingress;

import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The one body timer of an ingress connection: a request's body must be complete within the read
 * timeout from its head, and must not stall, no byte of it arriving for the stall timeout. Armed
 * when a body begins and none is armed, it fires at or before the current body's earlier deadline
 * and re-arms itself for what is left when the body made progress or began later than the one it
 * was armed for: a timer per connection, not a scheduled task per request or per chunk.
 *
 * <p>Used on the connection's event loop only.
 */
final class BodyTimer {
  private final ChannelHandlerContext ctx;
  private final BooleanSupplier receiving;
  private final Consumer<Boolean> timedOut;
  private final Runnable task = this::fired;

  /** When the current body must be complete, on the loop's ticker. */
  private long deadline;

  /** How long the current body may go without a byte. */
  private long stallNanos;

  /** When the current body's last bytes arrived (its head, before the first). */
  private long progress;

  private ScheduledFuture<?> timer;

  /**
   * @param receiving whether a body is being received now
   * @param timedOut runs when a body is still being received at its deadline ({@code false}) or
   *     after the stall timeout without a byte ({@code true})
   */
  BodyTimer(ChannelHandlerContext ctx, BooleanSupplier receiving, Consumer<Boolean> timedOut) {
    this.ctx = ctx;
    this.receiving = receiving;
    this.timedOut = timedOut;
  }

  /**
   * A body begins: it must be complete within {@code timeoutNanos} from now, with no pause of
   * {@code stallNanos}.
   */
  void arm(long timeoutNanos, long stallNanos) {
    long now = ctx.executor().ticker().nanoTime();
    deadline = now + timeoutNanos;
    progress = now;
    this.stallNanos = stallNanos;
    if (timer == null) {
      timer =
          ctx.executor().schedule(task, Math.min(timeoutNanos, stallNanos), TimeUnit.NANOSECONDS);
    }
  }

  /** Bytes of the current body arrived. */
  void progressed() {
    progress = ctx.executor().ticker().nanoTime();
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
    long now = ctx.executor().ticker().nanoTime();
    long left = deadline - now;
    long stallLeft = progress + stallNanos - now;
    if (left <= 0) {
      timedOut.accept(false);
    } else if (stallLeft <= 0) {
      timedOut.accept(true);
    } else {
      // The body made progress, or began after the one the timer was armed for.
      timer = ctx.executor().schedule(task, Math.min(left, stallLeft), TimeUnit.NANOSECONDS);
    }
  }
}
