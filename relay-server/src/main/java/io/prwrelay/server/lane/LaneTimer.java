package io.prwrelay.server.lane;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One timer of a lane: runs its task once, on the lane's loop, at a ticker time. {@link #atMost}
 * keeps a timer already set to fire no later (the task looks again when it fires, so an early
 * firing costs less than a new timer each time), {@link #set} replaces it. Touched only on the
 * loop.
 */
final class LaneTimer {
  private final EventLoop loop;
  private final Runnable fire;
  private ScheduledFuture<?> future;
  private long at;

  LaneTimer(EventLoop loop, Runnable task) {
    this.loop = loop;
    this.fire =
        () -> {
          future = null;
          task.run();
        };
  }

  /** Fires at {@code at} at the latest: unchanged when set to fire no later already. */
  void atMost(long at, long now) {
    if (future != null && !future.isDone() && this.at - at <= 0) {
      return;
    }
    set(at, now);
  }

  /** Fires at {@code at} (at once when it has passed), whatever was set before. */
  void set(long at, long now) {
    cancel();
    this.at = at;
    future = loop.schedule(fire, Math.max(0, at - now), TimeUnit.NANOSECONDS);
  }

  void cancel() {
    if (future != null) {
      future.cancel(false);
      future = null;
    }
  }
}
