package io.prwrelay.server.write;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Lets one log line through per interval, across threads: what a client can cause (an error per
 * connection) must not be able to flood the log. The suppressed lines are still counted by their
 * callers' metrics. One per kind of line, held by whoever logs it (the ingress's connection errors,
 * the pipeline's internal errors).
 */
public final class LogLimiter {
  private final long intervalNanos;
  private final AtomicLong next = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong suppressed = new AtomicLong();

  /**
   * @param intervalNanos the least time between two lines let through
   */
  public LogLimiter(long intervalNanos) {
    this.intervalNanos = intervalNanos;
  }

  /** Whether a line may be logged at {@code nowNanos}; at most once per interval. */
  public boolean allow(long nowNanos) {
    return pass(nowNanos) >= 0;
  }

  /**
   * Whether a line may be logged at {@code nowNanos}, at most once per interval: -1 when not (the
   * line is counted as suppressed), else how many were suppressed since the last line let through.
   */
  public long pass(long nowNanos) {
    long due = next.get();
    if ((due == Long.MIN_VALUE || nowNanos - due >= 0)
        && next.compareAndSet(due, nowNanos + intervalNanos)) {
      return suppressed.getAndSet(0);
    }
    suppressed.incrementAndGet();
    return -1;
  }
}
