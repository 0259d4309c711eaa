package io.prwrelay.server.isolation;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/** The fixed pace of a test sender: one request a period, without making up for late ones. */
final class Pace {
  private Pace() {}

  /**
   * Waits until one {@code period} after {@code slot} (a {@link System#nanoTime} reading), or not
   * at all when that time has passed.
   *
   * @return the next slot: the time waited for, or now when it had passed
   */
  static long next(long slot, Duration period) {
    long next = slot + period.toNanos();
    long wait = next - System.nanoTime();
    if (wait > 0) {
      LockSupport.parkNanos(wait);
      return next;
    }
    return System.nanoTime();
  }
}
