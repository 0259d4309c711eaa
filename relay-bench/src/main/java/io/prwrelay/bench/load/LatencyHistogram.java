package io.prwrelay.bench.load;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Latencies in nanoseconds in fixed log-linear buckets: exact below 128 ns, then 64 buckets per
 * power of two, so a reported percentile is at most 1/64 (1.6 %) above the recorded value. Values
 * above {@value #MAX_EXPONENT}-bit nanoseconds (about 4.9 hours) are recorded as that maximum.
 * Memory is fixed (a few thousand counters) whatever the number of values. Thread-safe: any thread
 * may record while another reads.
 */
public final class LatencyHistogram {
  private static final int SUB_BITS = 6;
  private static final int SUB = 1 << SUB_BITS;
  private static final int MAX_EXPONENT = 44;
  private static final long MAX_VALUE = (1L << MAX_EXPONENT) - 1;
  private static final int BUCKETS = index(MAX_VALUE) + 1;

  private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
  private final AtomicLong total = new AtomicLong();
  private final AtomicLong max = new AtomicLong();

  /** Records one latency; negative values count as 0. */
  public void record(long nanos) {
    long v = Math.min(Math.max(nanos, 0), MAX_VALUE);
    counts.incrementAndGet(index(v));
    total.incrementAndGet();
    max.accumulateAndGet(v, Math::max);
  }

  /** Values recorded so far. */
  public long count() {
    return total.get();
  }

  /** Largest value recorded, exact; 0 when empty. */
  public long maxNanos() {
    return max.get();
  }

  /**
   * The value at {@code percentile} (0-100]: the upper bound of the bucket holding it, never above
   * the maximum recorded; 0 when empty.
   */
  public long percentileNanos(double percentile) {
    long n = total.get();
    if (n == 0) {
      return 0;
    }
    long rank = Math.max(1, (long) Math.ceil(percentile / 100.0 * n));
    long seen = 0;
    for (int i = 0; i < BUCKETS; i++) {
      seen += counts.get(i);
      if (seen >= rank) {
        return Math.min(upperBound(i), max.get());
      }
    }
    return max.get();
  }

  /** A percentile in milliseconds, for reports. */
  public double percentileMillis(double percentile) {
    return percentileNanos(percentile) / (double) TimeUnit.MILLISECONDS.toNanos(1);
  }

  static int index(long v) {
    if (v < 2 * SUB) {
      return (int) v;
    }
    int exponent = 63 - Long.numberOfLeadingZeros(v);
    int shift = exponent - SUB_BITS;
    int mantissa = (int) (v >>> shift);
    return shift * SUB + mantissa;
  }

  static long upperBound(int index) {
    if (index < 2 * SUB) {
      return index;
    }
    int shift = index / SUB - 1;
    long mantissa = index - (long) shift * SUB;
    return ((mantissa + 1) << shift) - 1;
  }
}
