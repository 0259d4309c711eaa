package io.prwrelay.server.insight;

import java.util.Arrays;

/**
 * A uniform sample of one tenant's distinct series in one bucket, with their metric names: the
 * {@value #CAPACITY} smallest keys (a bottom-k sketch) among the series whose name the router
 * sampled, each key the label set hash mixed once more, each kept with its name hash. Because the
 * keys are a hash of the series, the same series has the same key in every bucket, and the smallest
 * {@value #CAPACITY} keys of several buckets together are exactly the smallest of their union:
 * merged over a window ({@link TenantWindow#snapshot}), the sample is {@value #CAPACITY} series
 * drawn uniformly from the window's distinct series, whatever their traffic. The share of a name
 * among them estimates its share of the tenant's active series (standard error {@code sqrt(p(1 - p)
 * / 256)}, at most 3.1 percentage points), and a key's first bucket in the window says whether that
 * series is new.
 *
 * <pre>
 *   keys[0, size)   the sample's keys (63 bits, so signed comparison orders them), unsorted
 *   names[0, size)  the name hash of keys[i]
 *   index[2 * n]    open addressing (n: the arrays' capacity) over the keys' low bits: entry + 1, 0 for empty
 *   largest         the entry with the largest key once full: a key above it is not kept
 * </pre>
 *
 * <p>A series whose key is above the largest kept (the common case once a bucket holds more than
 * {@value #CAPACITY} sampled series) costs one comparison; one below it, one probe of a 1 KiB
 * index. Replacing the largest rescans the keys for the next largest: in a stream of distinct
 * series that happens about {@code CAPACITY * ln(n / CAPACITY)} times per bucket, and the keys are
 * a hash the sender does not choose. The arrays start at {@value #FIRST_CAPACITY} series and double
 * as the bucket's sampled series grow, up to 5 KiB at {@value #CAPACITY} (a tenant of a few dozen
 * series keeps a few hundred bytes); they are kept when the bucket is cleared for reuse. Not
 * thread-safe (the owning {@link TenantWindow} locks).
 */
final class SeriesSample {
  /** Series kept: the sample's size once the bucket has that many sampled series. */
  static final int CAPACITY = 256;

  /** Series the arrays hold at first. */
  static final int FIRST_CAPACITY = 16;

  private long[] keys = new long[FIRST_CAPACITY];
  private long[] names = new long[FIRST_CAPACITY];
  private short[] index = new short[FIRST_CAPACITY * 2];
  private int mask = FIRST_CAPACITY * 2 - 1;
  private int size;
  private int largest = -1;

  /** The sample key of the series whose label set hashes to {@code hash}: non-negative. */
  static long key(long hash) {
    return HyperLogLog.mix(hash) >>> 1;
  }

  /** Adds the series of sample key {@code key} (see {@link #key}) and name hash {@code name}. */
  void add(long key, long name) {
    if (largest >= 0 && key >= keys[largest]) {
      return;
    }
    int slot = slot(key);
    if (index[slot] != 0) {
      return;
    }
    if (size < CAPACITY) {
      if (size == keys.length) {
        grow();
        slot = slot(key);
      }
      keys[size] = key;
      names[size] = name;
      index[slot] = (short) (size + 1);
      if (++size == CAPACITY) {
        largest = largest();
      }
      return;
    }
    int e = largest;
    remove(slot(keys[e]));
    keys[e] = key;
    names[e] = name;
    index[slot(key)] = (short) (e + 1);
    largest = largest();
  }

  /** Doubles the arrays (at most to {@value #CAPACITY} series) and re-indexes the keys. */
  private void grow() {
    int capacity = Math.min(CAPACITY, keys.length * 2);
    keys = Arrays.copyOf(keys, capacity);
    names = Arrays.copyOf(names, capacity);
    index = new short[capacity * 2];
    mask = capacity * 2 - 1;
    for (int e = 0; e < size; e++) {
      index[slot(keys[e])] = (short) (e + 1);
    }
  }

  /** The slot holding {@code key}, or the empty slot where it would go. */
  private int slot(long key) {
    int i = (int) key & mask;
    while (true) {
      int e = index[i];
      if (e == 0 || keys[e - 1] == key) {
        return i;
      }
      i = (i + 1) & mask;
    }
  }

  /** Empties slot {@code i}, moving back the entries after it that probed past it. */
  private void remove(int i) {
    int j = i;
    while (true) {
      j = (j + 1) & mask;
      int e = index[j];
      if (e == 0) {
        break;
      }
      int home = (int) keys[e - 1] & mask;
      // The entry at j may move to i unless its home lies cyclically in (i, j].
      boolean stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (!stays) {
        index[i] = index[j];
        i = j;
      }
    }
    index[i] = 0;
  }

  private int largest() {
    int m = 0;
    for (int i = 1; i < size; i++) {
      if (keys[i] > keys[m]) {
        m = i;
      }
    }
    return m;
  }

  /** Series held: {@value #CAPACITY} once the bucket had that many sampled series. */
  int size() {
    return size;
  }

  long key(int i) {
    return keys[i];
  }

  long name(int i) {
    return names[i];
  }

  void clear() {
    if (size > 0) {
      Arrays.fill(index, (short) 0);
      size = 0;
      largest = -1;
    }
  }
}
