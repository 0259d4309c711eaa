package io.prwrelay.server.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The one way the tests wait for something another thread or process does: poll a condition until
 * it holds, first every 10 ms and then less often (up to every 200 ms, gentle on a child process
 * polled over HTTP), and fail, naming what was awaited, when it does not hold in time. Where the
 * code under test runs on a {@code SimulatedLoop} or an {@code EmbeddedChannel}, tests move the
 * clock instead and wait for nothing.
 */
public final class Await {
  private static final long FIRST_POLL_MILLIS = 10;
  private static final long LONGEST_POLL_MILLIS = 200;

  private Await() {}

  /**
   * Returns once {@code condition} holds.
   *
   * @param what what is awaited, for the failure's message
   * @throws AssertionError when it does not hold within {@code timeout}
   */
  public static void until(String what, Duration timeout, BooleanSupplier condition)
      throws InterruptedException {
    if (!within(timeout, condition)) {
      throw new AssertionError("not within " + timeout + ": " + what);
    }
  }

  /**
   * Whether {@code condition} held within {@code timeout}: for a caller whose failure message needs
   * what only it has (a child process's log), and which must assert the result.
   */
  public static boolean within(Duration timeout, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    long pause = FIRST_POLL_MILLIS;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      Thread.sleep(pause);
      pause = Math.min(LONGEST_POLL_MILLIS, 2 * pause);
    }
    return true;
  }
}
