package io.prwrelay.server.insight;

import java.util.Arrays;

/**
 * The most frequent metric names of one tenant in one bucket, as a Misra-Gries summary over 64-bit
 * name hashes in {@value #CAPACITY} fixed counters: a name seen more than {@code total / (CAPACITY
 * + 1)} times is always among them, and each count falls short of the true one by at most that
 * much. Updates scan the counters in place (the last match first: series of one metric come in
 * runs) and never allocate.
 *
 * <p>Why not DataSketches' {@code LongsSketch}: its purge, which runs whenever a tenant has more
 * names than the map holds (most tenants have hundreds), allocates a sample array, and its map is
 * allocated again after each {@code reset()}; the hot path must not allocate. Not thread-safe: the
 * owning {@link TenantWindow} locks.
 */
final class TopNames {
  /** Counters kept; also the bound on names reported per bucket. */
  static final int CAPACITY = 32;

  private final long[] keys = new long[CAPACITY];
  private final long[] counts = new long[CAPACITY];
  private int used;
  private int last;
  private long total;

  /** Counts one more series of the name hashing to {@code key}. */
  void add(long key) {
    total++;
    if (last < used && keys[last] == key) {
      counts[last]++;
      return;
    }
    for (int i = 0; i < used; i++) {
      if (keys[i] == key) {
        counts[i]++;
        last = i;
        return;
      }
    }
    if (used < CAPACITY) {
      keys[used] = key;
      counts[used] = 1;
      last = used++;
      return;
    }
    // Full: every counter, and the new name's one occurrence, lose one; counters at zero free up.
    int kept = 0;
    for (int i = 0; i < used; i++) {
      long c = counts[i] - 1;
      if (c > 0) {
        keys[kept] = keys[i];
        counts[kept++] = c;
      }
    }
    used = kept;
    last = 0;
  }

  /** Series counted, all names. */
  long total() {
    return total;
  }

  /** Names with a counter. */
  int size() {
    return used;
  }

  long key(int i) {
    return keys[i];
  }

  /** Lower bound of the series of name {@code i}. */
  long count(int i) {
    return counts[i];
  }

  void clear() {
    Arrays.fill(keys, 0);
    used = 0;
    last = 0;
    total = 0;
  }
}
