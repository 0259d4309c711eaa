package io.prwrelay.server.insight;

import io.prwrelay.core.route.SeriesDigests;
import java.nio.charset.StandardCharsets;

/**
 * Metric names by their 64-bit hash ({@link SeriesDigests#nameHash}), for showing the names that
 * the per-tenant summaries count by hash. One table for the relay, at most {@link #capacity()}
 * names and {@link #maxBytes()} bytes of them (each counted as {@value #ENTRY_BYTES} bytes of
 * entry, string and slots plus its characters, two bytes each for a name outside Latin-1): when
 * either is reached it starts over, and names still in use come back with their next sampled
 * series. The routers cut every name to {@link SeriesDigests#MAX_NAME_BYTES} bytes of UTF-8, so a
 * name counts as at most 328 bytes here.
 *
 * <p>Lookups read the table without a lock: each slot holds an immutable entry (final fields, so a
 * reader that sees the entry sees its key and name), and a name not found yet is added under the
 * lock. A name costs one {@code String} and one entry, once.
 */
final class MetricNames {
  /** Heap of one name besides its characters: the entry, the string and its array, two slots. */
  static final int ENTRY_BYTES = 72;

  private final int capacity;
  private final long maxBytes;
  private final Entry[] slots;
  private int size;
  private long bytes;

  private record Entry(long key, String name) {}

  /**
   * @param capacity most names kept before the table starts over
   * @param maxBytes most bytes of names kept before the table starts over
   */
  MetricNames(int capacity, long maxBytes) {
    this.capacity = capacity;
    this.maxBytes = maxBytes;
    int slots = Integer.highestOneBit(Math.max(16, capacity * 2 - 1)) << 1;
    this.slots = new Entry[slots];
  }

  int capacity() {
    return capacity;
  }

  long maxBytes() {
    return maxBytes;
  }

  /** Names held now. */
  synchronized int size() {
    return size;
  }

  /** Bytes the names held now are counted as. */
  synchronized long bytes() {
    return bytes;
  }

  /** What a name is counted as: {@link #ENTRY_BYTES} and its characters' bytes in the string. */
  static long cost(String name) {
    int perChar = 1;
    for (int i = 0; i < name.length(); i++) {
      if (name.charAt(i) > 0xFF) {
        perChar = 2;
        break;
      }
    }
    return ENTRY_BYTES + (long) perChar * name.length();
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
      learn(digests.nameHash(n), digests.nameBytes(), digests.nameOffset(n), digests.nameLength(n));
    }
  }

  /**
   * Makes sure the name {@code bytes[offset, offset + length)} (UTF-8) is known under {@code key}.
   *
   * @param bytes borrowed
   */
  void learn(long key, byte[] bytes, int offset, int length) {
    if (get(key) == null) {
      add(key, new String(bytes, offset, length, StandardCharsets.UTF_8));
    }
  }

  private synchronized void add(long key, String name) {
    if (get(key) != null) {
      return;
    }
    long cost = cost(name);
    if (size == capacity || bytes + cost > maxBytes) {
      java.util.Arrays.fill(slots, null);
      size = 0;
      bytes = 0;
    }
    int mask = slots.length - 1;
    int i = (int) key & mask;
    while (slots[i] != null) {
      i = (i + 1) & mask;
    }
    slots[i] = new Entry(key, name);
    size++;
    bytes += cost;
  }
}
