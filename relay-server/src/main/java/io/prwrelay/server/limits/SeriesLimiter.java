package io.prwrelay.server.limits;

import io.prwrelay.core.route.SeriesLimits;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One tenant's series limit: which series are active (sent in the current or the previous window)
 * and how many distinct series the current window admitted, in two generations of {@link
 * SeriesFilter}s, as vmagent's series limiter keeps two rotating Bloom filters.
 *
 * <p><b>Admission</b> ({@link #admit}) of a series' label set hash:
 *
 * <ol>
 *   <li>found in the current generation: active, admitted (the usual case: one word read);
 *   <li>found in the previous generation: active last window, admitted and added to the current one
 *       (counted: it is active in this window too), whatever the count;
 *   <li>otherwise new: admitted and added while the current window's count is below the limit, else
 *       dropped.
 * </ol>
 *
 * A series once added is always found (a Bloom filter has no false negatives), so <b>a series
 * active in this or the last window is never dropped</b>; a false positive makes a new series pass
 * as active (admitted, not counted), so the limit lets through at most its filters' false-positive
 * rate more new series than it allows. The count never exceeds the limit by more than the series
 * carried over from the last window when the limit was lowered.
 *
 * <p><b>Memory.</b> A generation starts with one filter sized to the series the last window counted
 * (at least {@value #MIN_CAPACITY}), and when its count passes the newest filter's capacity it adds
 * one four times larger, up to the limit rounded up to a power of two; a series found in an older
 * filter of the generation is added to the newest. Each filter is charged to the shared {@link
 * LimitsMemory} before it is allocated; refused, the generation keeps its filters (their
 * false-positive rate then grows past the stated one: more new series pass) and {@link #starved}
 * says so. So a tenant's filters take at most {@link #maxBytes} for its limit, and a tenant with
 * few series a few KiB.
 *
 * <p>Thread-safe: the routers of every event loop admit at once; {@link #rotate} runs on the
 * limits' own thread. Allocates nothing per series.
 */
final class SeriesLimiter implements SeriesLimits.Gate {
  /** Capacity of a generation's first filter, in series: 2 KiB. */
  static final int MIN_CAPACITY = 1024;

  /** A window's filters, newest last, and the distinct series it admitted. */
  private static final class Generation {
    volatile SeriesFilter[] parts;
    final AtomicInteger count = new AtomicInteger();

    Generation(SeriesFilter first) {
      parts = new SeriesFilter[] {first};
    }

    boolean mayContain(long hash, long bits) {
      SeriesFilter[] p = parts;
      for (int i = p.length - 1; i >= 0; i--) {
        if (p[i].mayContain(hash, bits)) {
          return true;
        }
      }
      return false;
    }

    long bytes() {
      long n = 0;
      for (SeriesFilter f : parts) {
        n += f.bytes();
      }
      return n;
    }
  }

  private final LimitsMemory memory;
  private volatile int limit;
  private volatile Generation current;
  private volatile Generation previous;

  /** The current generation's newest filter: the one an active series is found in. */
  private volatile SeriesFilter newest;

  private volatile boolean starved;

  /**
   * @param first the current generation's first filter, already charged to {@code memory}
   */
  private SeriesLimiter(int limit, LimitsMemory memory, SeriesFilter first) {
    this.limit = limit;
    this.memory = memory;
    this.current = new Generation(first);
    this.newest = first;
  }

  /**
   * A limiter of {@code limit} series whose first filter {@code memory} granted; {@code null} when
   * it refused.
   */
  static SeriesLimiter create(int limit, LimitsMemory memory) {
    int capacity = Math.min(MIN_CAPACITY, maxCapacity(limit));
    if (!memory.reserve(SeriesFilter.bytes(capacity))) {
      return null;
    }
    return new SeriesLimiter(limit, memory, new SeriesFilter(capacity));
  }

  /** Largest filter of a limit: the limit rounded up to a power of two, at least 4. */
  static int maxCapacity(int limit) {
    return Math.max(4, Integer.highestOneBit(Math.max(1, limit - 1)) << 1);
  }

  /**
   * Most bytes the filters of one tenant with {@code limit} take: two generations, each at most
   * filters of 1/64, 1/16, 1/4 and 1 times the largest (4/3 of it).
   */
  static long maxBytes(int limit) {
    return 2 * (SeriesFilter.bytes(maxCapacity(limit)) * 4 / 3 + 4 * 48);
  }

  @Override
  public boolean admit(long hash) {
    // The usual case, kept small enough to be inlined into the router: an active series.
    long bits = SeriesFilter.bits(hash);
    if (newest.mayContain(hash, bits)) {
      return true;
    }
    return admitNotNewest(hash, bits);
  }

  private boolean admitNotNewest(long hash, long bits) {
    Generation cur = current;
    SeriesFilter[] parts = cur.parts;
    SeriesFilter newest = parts[parts.length - 1];
    if (newest.mayContain(hash, bits)) {
      return true;
    }
    for (int i = parts.length - 2; i >= 0; i--) {
      if (parts[i].mayContain(hash, bits)) {
        newest.add(hash, bits);
        return true;
      }
    }
    Generation prev = previous;
    int n;
    if (prev != null && prev.mayContain(hash, bits)) {
      n = cur.count.incrementAndGet();
    } else {
      if (cur.count.get() >= limit) {
        return false;
      }
      n = cur.count.incrementAndGet();
      if (n > limit) {
        cur.count.decrementAndGet();
        return false;
      }
    }
    if (n > newest.capacity() && newest.capacity() < maxCapacity(limit)) {
      newest = grow(cur, newest);
    }
    newest.add(hash, bits);
    return true;
  }

  /** The generation's newest filter, one four times larger added when memory grants it. */
  private SeriesFilter grow(Generation g, SeriesFilter seen) {
    synchronized (g) {
      SeriesFilter[] parts = g.parts;
      SeriesFilter newest = parts[parts.length - 1];
      if (newest != seen) {
        return newest; // another loop grew it
      }
      int capacity = (int) Math.min((long) newest.capacity() * 4, maxCapacity(limit));
      if (!memory.reserve(SeriesFilter.bytes(capacity))) {
        starved = true;
        return newest;
      }
      SeriesFilter grown = new SeriesFilter(capacity);
      SeriesFilter[] more = Arrays.copyOf(parts, parts.length + 1);
      more[parts.length] = grown;
      g.parts = more;
      if (current == g) {
        newest = grown;
      }
      return grown;
    }
  }

  /**
   * Ends the window: the current generation becomes the previous one (the previous one's memory is
   * given back) and a new one starts with one filter sized for the series just counted.
   *
   * @return whether the tenant sent no series in the last two windows (it may be forgotten)
   */
  boolean rotate() {
    Generation cur = current;
    Generation prev = previous;
    int counted = cur.count.get();
    int capacity =
        Math.min(
            Math.max(MIN_CAPACITY, Integer.highestOneBit(Math.max(1, counted)) << 1),
            maxCapacity(limit));
    SeriesFilter first;
    if (memory.reserve(SeriesFilter.bytes(capacity))) {
      first = new SeriesFilter(capacity);
    } else if (memory.reserve(SeriesFilter.bytes(4))) {
      starved = true;
      first = new SeriesFilter(4);
    } else {
      // Not even the smallest: keep the windows as they are.
      starved = true;
      return false;
    }
    synchronized (cur) {
      previous = cur;
      current = new Generation(first);
      newest = first;
    }
    if (prev != null) {
      memory.release(prev.bytes());
    }
    return counted == 0 && (prev == null || prev.count.get() == 0);
  }

  /** Gives back every filter's memory: the tenant is forgotten. */
  void close() {
    Generation prev = previous;
    memory.release(current.bytes() + (prev == null ? 0 : prev.bytes()));
  }

  /** Changes the limit; series already counted stay. */
  void limit(int limit) {
    this.limit = limit;
  }

  int limit() {
    return limit;
  }

  /** Distinct series admitted in the current window: the tenant's use of its limit. */
  int active() {
    return current.count.get();
  }

  /** Bytes the filters take now. */
  long bytes() {
    Generation prev = previous;
    return current.bytes() + (prev == null ? 0 : prev.bytes());
  }

  /** Whether memory refused a filter since the tenant's limiter was made. */
  boolean starved() {
    return starved;
  }
}
