package io.prwrelay.core.route;

import io.prwrelay.core.wire.ScratchMemory;
import java.util.Arrays;

/**
 * A map from small non-negative keys (tenant table entries, symbol refs) to ints that holds for one
 * request: {@link #clear()} at the start of a request forgets every key in O(1) by moving to a new
 * stamp, so a router keeps its arrays across requests and allocates only when a key is larger than
 * any seen before; they grow in the router's {@link ScratchMemory}.
 *
 * <p>Not thread-safe: owned by one router.
 */
final class RequestIntMap {
  /** What {@link #get} returns for a key not put since the last {@link #clear()}. */
  static final int ABSENT = Integer.MIN_VALUE;

  // A key's value is valid when its stamp equals the current one.
  private int[] values;
  private int[] stamps;
  private int stamp;
  private final ScratchMemory scratch;

  RequestIntMap(int initialCapacity) {
    this(initialCapacity, new ScratchMemory());
  }

  RequestIntMap(int initialCapacity, ScratchMemory scratch) {
    this.scratch = scratch;
    values = new int[initialCapacity];
    stamps = new int[initialCapacity];
    scratch.register(
        () -> {
          values = new int[initialCapacity];
          stamps = new int[initialCapacity];
        });
  }

  /** Forgets every key; the stamps start over before they could wrap around. */
  void clear() {
    if (++stamp == Integer.MAX_VALUE) {
      Arrays.fill(stamps, 0);
      stamp = 1;
    }
  }

  /** The value put for {@code key} since the last {@link #clear()}, or {@link #ABSENT}. */
  int get(int key) {
    return key < stamps.length && stamps[key] == stamp ? values[key] : ABSENT;
  }

  /** Maps {@code key} to {@code value} until the next {@link #clear()}; returns {@code value}. */
  int put(int key, int value) {
    if (key >= stamps.length) {
      int n = Math.max(key + 1, stamps.length * 2);
      scratch.charge(2L * Integer.BYTES * (n - stamps.length));
      stamps = Arrays.copyOf(stamps, n);
      values = Arrays.copyOf(values, n);
    }
    stamps[key] = stamp;
    values[key] = value;
    return value;
  }
}
