package io.prwrelay.server.insight;

import io.prwrelay.core.route.SeriesDigests;
import java.nio.charset.StandardCharsets;

/**
 * Metric names by their 64-bit hash ({@link SeriesDigests#nameHash}), for showing the names that
 * the per-tenant summaries count by hash. One table for the relay, at most {@link #capacity()}
 * names: when full it starts over, and names still in use come back with their next series.
 *
 * <p>Lookups read the table without a lock: each slot holds an immutable entry (final fields, so a
 * reader that sees the entry sees its key and name), and a name not found yet is added under the
 * lock. A name costs one {@code String} and one entry, once.
 */
final class MetricNames {
  private final int capacity;
  private final Entry[] slots;
  private int size;

  private record Entry(long key, String name) {}

  /**
   * @param capacity most names kept before the table starts over
   */
  MetricNames(int capacity) {
    this.capacity = capacity;
    int slots = Integer.highestOneBit(Math.max(16, capacity * 2 - 1)) << 1;
    this.slots = new Entry[slots];
  }

  int capacity() {
    return capacity;
  }

  /** The name hashing to {@code key}, or {@code null} when it is not (or no longer) known. */
  String get(long key) {
    Entry[] t = slots;
    int mask = t.length - 1;
    for (int i = (int) key & mask; ; i = (i + 1) & mask) {
      Entry e = t[i];
      if (e == null) {
        return null;
      }
      if (e.key() == key) {
        return e.name();
      }
    }
  }

  /**
   * Makes sure every name of {@code digests} is known.
   *
   * @param digests borrowed
   */
  void learn(SeriesDigests digests) {
    for (int n = 0; n < digests.nameCount(); n++) {
      long key = digests.nameHash(n);
      if (get(key) == null) {
        add(
            key,
            new String(
                digests.nameBytes(),
                digests.nameOffset(n),
                digests.nameLength(n),
                StandardCharsets.UTF_8));
      }
    }
  }

  private synchronized void add(long key, String name) {
    if (get(key) != null) {
      return;
    }
    if (size == capacity) {
      java.util.Arrays.fill(slots, null);
      size = 0;
    }
    int mask = slots.length - 1;
    int i = (int) key & mask;
    while (slots[i] != null) {
      i = (i + 1) & mask;
    }
    slots[i] = new Entry(key, name);
    size++;
  }
}
