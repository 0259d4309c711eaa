package io.prwrelay.server.limits;

/**
 * The metric names of one tenant's series most often dropped by its series limit in the current
 * window, for the tenants page: at most {@value #SLOTS} names, each at most 256 bytes (the digest's
 * cut), counted by the Space-Saving rule (a new name takes the place of the least counted one and
 * inherits its count, so a heavy hitter is never lost). Counts come from the sampled names of the
 * route step (one series in eight), so they are shares, not series. Thread-safe.
 */
final class LimitedNames {
  static final int SLOTS = 8;

  /** Bytes of one tenant's names at most: the strings and their slots. */
  static final long BYTES = SLOTS * (256 + 64);

  private final String[] names = new String[SLOTS];
  private final long[] counts = new long[SLOTS];

  synchronized void add(String name, long count) {
    int min = 0;
    for (int i = 0; i < SLOTS; i++) {
      if (name.equals(names[i])) {
        counts[i] += count;
        return;
      }
      if (names[i] == null) {
        names[i] = name;
        counts[i] = count;
        return;
      }
      if (counts[i] < counts[min]) {
        min = i;
      }
    }
    names[min] = name;
    counts[min] += count;
  }

  /** The names, most counted first, with their counts: {@code name=count}. */
  synchronized java.util.List<String> top(int n) {
    java.util.List<String> out = new java.util.ArrayList<>();
    boolean[] taken = new boolean[SLOTS];
    for (int k = 0; k < Math.min(n, SLOTS); k++) {
      int best = -1;
      for (int i = 0; i < SLOTS; i++) {
        if (names[i] != null && !taken[i] && (best < 0 || counts[i] > counts[best])) {
          best = i;
        }
      }
      if (best < 0) {
        break;
      }
      taken[best] = true;
      out.add(names[best]);
    }
    return out;
  }

  synchronized void clear() {
    java.util.Arrays.fill(names, null);
    java.util.Arrays.fill(counts, 0);
  }
}
