package io.prwrelay.server.limits;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A blocked Bloom filter of label set hashes: each series sets {@value #K} bits of one 64-bit word,
 * so that a lookup reads one word (one cache line) whatever the filter's size. Sized for {@link
 * #capacity()} series at {@value #BITS_PER_SERIES} bits each.
 *
 * <pre>
 *   hash:  | 63 ........ 32 | 31 .. 26 | 25 .. 20 | 19 .. 14 | 13 .. 8 | 7 .. 0 |
 *          |  word index     |  bit 4   |  bit 3   |  bit 2   |  bit 1  | unused |
 * </pre>
 *
 * The low byte is left alone: the insight samples metric names by the hash's low bits ({@code
 * SeriesDigests.samplesName}), and the series it samples must not crowd into a few bit positions.
 *
 * <p>No false negatives: a hash added is always found. False positives (a hash never added found)
 * are the measured rate {@code SeriesFilterTest#falsePositiveRateAtCapacityIsUnderOnePercent}
 * states. Adds are atomic ({@code getAndBitwiseOr}) so that routers on several event loops may add
 * at once; a lookup is a plain read of one word.
 */
final class SeriesFilter {
  /** Bits set per series. */
  static final int K = 4;

  /** Bits per series of capacity: 16, 2 bytes. */
  static final int BITS_PER_SERIES = 16;

  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

  private final long[] words;
  private final int mask;
  private final int capacity;

  /**
   * @param capacity series the filter holds at its stated rate; a power of two, at least 4
   */
  SeriesFilter(int capacity) {
    this.capacity = capacity;
    this.words = new long[capacity * BITS_PER_SERIES / 64];
    this.mask = words.length - 1;
  }

  /** Bytes of a filter of {@code capacity} series: its words and its object headers. */
  static long bytes(int capacity) {
    return (long) capacity * BITS_PER_SERIES / 8 + 48;
  }

  int capacity() {
    return capacity;
  }

  long bytes() {
    return bytes(capacity);
  }

  /** The {@value #K} bits a hash sets in its word. */
  static long bits(long hash) {
    return 1L << (hash >>> 8) | 1L << (hash >>> 14) | 1L << (hash >>> 20) | 1L << (hash >>> 26);
  }

  /** Whether {@code hash} (whose {@link #bits} are {@code bits}) may have been added. */
  boolean mayContain(long hash, long bits) {
    return (words[(int) (hash >>> 32) & mask] & bits) == bits;
  }

  /** Adds {@code hash}, whose {@link #bits} are {@code bits}. */
  void add(long hash, long bits) {
    int i = (int) (hash >>> 32) & mask;
    if ((words[i] & bits) != bits) {
      WORDS.getAndBitwiseOr(words, i, bits);
    }
  }
}
