package io.prwrelay.server.lane;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The lanes of every loop, never more than {@code relay.lanes.max}: a loop takes a place before it
 * makes a lane ({@link #tryTake}), so two loops that each see one place left cannot both make one.
 * Reading the count and then adding to it, as two steps, let every loop but one pass the bound by
 * one lane at the same moment.
 */
final class LaneCount {
  private final int max;
  private final AtomicInteger count = new AtomicInteger();

  /**
   * @param max lanes at most
   */
  LaneCount(int max) {
    this.max = max;
  }

  /** Takes a place for a new lane; false when {@code max} lanes exist. */
  boolean tryTake() {
    while (true) {
      int c = count.get();
      if (c >= max) {
        return false;
      }
      if (count.compareAndSet(c, c + 1)) {
        return true;
      }
    }
  }

  /** A lane was forgotten: its place is free. */
  void give() {
    count.decrementAndGet();
  }

  /** Lanes that exist now. */
  int get() {
    return count.get();
  }

  /** {@code relay.lanes.max}. */
  int max() {
    return max;
  }
}
