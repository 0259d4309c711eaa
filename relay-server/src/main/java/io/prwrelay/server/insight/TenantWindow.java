package io.prwrelay.server.insight;

import io.prwrelay.core.route.SeriesDigests;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One tenant's sliding window: {@value #BUCKETS} buckets, each a tenth of the window, each holding
 * a {@link HyperLogLog} of the label set hashes routed to the tenant in it, a {@link TopNames}
 * summary of their sampled metric names, and the series and bytes routed. The window's active
 * series are the estimate of the union of its buckets, so a series not sent for a whole window
 * drops out.
 *
 * <pre>
 *   epoch:   e-9    e-8   ...   e-1    e (current, being filled)
 *   ring:  [  b  ][  b  ] ... [  b  ][  b  ]   index = epoch mod 10, each bucket tagged with its epoch
 *          \_______________ closed ________/
 * </pre>
 *
 * <p>When the first series of a new epoch arrives, the closed buckets are unioned once: that union
 * (kept as {@code closed}) makes a read cost one union with the current bucket, and its estimate
 * with the bucket about to be reused is the window's size as it stood then (the history the growth
 * is read from).
 *
 * <p><b>Size:</b> {@link HyperLogLog#M} four-bit registers per counter (relative standard error
 * about 1.15 %), 4 KiB at every size: 11 of them (10 buckets and the closed union) plus 10 {@link
 * TopNames} make about 54 KiB of heap per tenant (measured in docs/tenant-insight.md).
 *
 * <p>Thread-safe: requests of one tenant are routed on every event loop, so every method locks the
 * window. A request's series of the tenant are recorded under one lock (a few microseconds for
 * thousands of series); reads (the page, the API, scrapes) take it as briefly.
 */
final class TenantWindow {
  /** Buckets of a window. */
  static final int BUCKETS = 10;

  private static final class Bucket {
    long epoch = Long.MIN_VALUE;
    final HyperLogLog hll = new HyperLogLog();
    final TopNames names = new TopNames();
    long series;
    long bytes;

    /** Series whose name was sampled but that had none. */
    long unnamed;

    void reset(long e) {
      epoch = e;
      hll.reset();
      names.clear();
      series = 0;
      bytes = 0;
      unnamed = 0;
    }
  }

  private final Bucket[] ring = new Bucket[BUCKETS];

  /** Union of the closed buckets of the window that ends with {@link #closedEpoch}. */
  private final HyperLogLog closed = new HyperLogLog();

  private long closedEpoch = Long.MIN_VALUE;

  /** Window estimate when bucket {@code epoch} began, by {@code epoch mod BUCKETS}. */
  private final double[] history = new double[BUCKETS];

  private final long[] historyEpoch = new long[BUCKETS];
  private final long sinceNanos;

  /**
   * @param sinceNanos when the tenant began to be tracked, on the buckets' clock
   */
  TenantWindow(long sinceNanos) {
    for (int i = 0; i < BUCKETS; i++) {
      ring[i] = new Bucket();
      historyEpoch[i] = Long.MIN_VALUE;
    }
    this.sinceNanos = sinceNanos;
  }

  /**
   * Records the series of {@code slot} in {@code digests}.
   *
   * @param digests borrowed
   * @param series the batch's series (counted also when they carry no digests)
   * @param bytes the batch's uncompressed bytes
   */
  synchronized void record(long epoch, SeriesDigests digests, int slot, int series, long bytes) {
    Bucket b = bucket(epoch);
    b.series += series;
    b.bytes += bytes;
    if (digests == null) {
      return;
    }
    HyperLogLog hll = b.hll;
    TopNames names = b.names;
    for (int e = digests.first(slot); e != SeriesDigests.END; e = digests.next(e)) {
      hll.add(digests.hash(e));
      int name = digests.name(e);
      if (name >= 0) {
        names.add(digests.nameHash(name));
      } else if (name == SeriesDigests.NO_NAME) {
        b.unnamed++;
      }
    }
  }

  /** Series routed to the tenant in bucket {@code epoch} (0 when that bucket is gone). */
  synchronized long series(long epoch) {
    Bucket b = ring[index(epoch)];
    return b.epoch == epoch ? b.series : 0;
  }

  private static int index(long epoch) {
    return (int) Math.floorMod(epoch, (long) BUCKETS);
  }

  /** The bucket of {@code epoch}, started (and the window's closed part unioned) when new. */
  private Bucket bucket(long epoch) {
    Bucket b = ring[index(epoch)];
    if (b.epoch == epoch) {
      return b;
    }
    // The buckets of [epoch - BUCKETS + 1, epoch - 1], then the one this epoch reuses: the window
    // that ends now.
    closed.reset();
    for (Bucket o : ring) {
      if (o.epoch < epoch && o.epoch > epoch - BUCKETS) {
        closed.union(o.hll);
      }
    }
    closedEpoch = epoch;
    history[index(epoch)] =
        b.epoch == epoch - BUCKETS
            ? HyperLogLog.estimateUnion(new HyperLogLog[] {closed, b.hll}, 2)
            : closed.estimate();
    historyEpoch[index(epoch)] = epoch;
    b.reset(epoch);
    return b;
  }

  /**
   * What the window holds at {@code nowNanos}.
   *
   * @param bucketNanos length of a bucket
   * @param names resolves name hashes to names
   */
  synchronized Snapshot snapshot(long nowNanos, long bucketNanos, MetricNames names) {
    long epoch = Math.floorDiv(nowNanos, bucketNanos);
    HyperLogLog[] union = new HyperLogLog[BUCKETS + 1];
    int counters = 0;
    long series = 0;
    long bytes = 0;
    long named = 0;
    long unnamed = 0;
    Map<Long, Long> counts = new HashMap<>();
    boolean closedCurrent = closedEpoch == epoch;
    if (closedCurrent) {
      union[counters++] = closed;
    }
    for (Bucket b : ring) {
      if (b.epoch > epoch || b.epoch <= epoch - BUCKETS) {
        continue;
      }
      if (!closedCurrent || b.epoch == epoch) {
        union[counters++] = b.hll;
      }
      series += b.series;
      bytes += b.bytes;
      unnamed += b.unnamed;
      named += b.names.total();
      for (int i = 0; i < b.names.size(); i++) {
        counts.merge(b.names.key(i), b.names.count(i), Long::sum);
      }
    }
    // Seconds the window's buckets cover: from the oldest bucket's start, or from when the tenant
    // began to be tracked if later.
    long start = Math.max((epoch - BUCKETS + 1) * bucketNanos, sinceNanos);
    double seconds = (nowNanos - start) / 1e9;
    List<TopMetric> top = new ArrayList<>();
    long sampled = named + unnamed;
    if (sampled > 0) {
      counts.entrySet().stream()
          .sorted((x, y) -> Long.compare(y.getValue(), x.getValue()))
          .limit(5)
          .forEach(
              e -> {
                String name = names.get(e.getKey());
                top.add(
                    new TopMetric(
                        name == null ? "#" + Long.toHexString(e.getKey()) : name,
                        (double) e.getValue() / sampled));
              });
    }
    double[] past = new double[BUCKETS];
    for (int k = 0; k < BUCKETS; k++) {
      long e = epoch - BUCKETS + 1 + k;
      int i = index(e);
      past[k] = historyEpoch[i] == e ? history[i] : Double.NaN;
    }
    return new Snapshot(
        Math.round(HyperLogLog.estimateUnion(union, counters)),
        past,
        seconds <= 0 ? 0 : series / seconds,
        seconds <= 0 ? 0 : bytes / seconds,
        top,
        sampled);
  }

  /**
   * One tenant's window as read.
   *
   * @param activeSeries estimated distinct label sets in the window
   * @param history the window's estimate when each of the last {@value #BUCKETS} buckets began,
   *     oldest first; NaN where unknown (the tenant was not tracked yet)
   * @param seriesPerSecond series routed per second over the window
   * @param bytesPerSecond uncompressed batch bytes per second over the window
   * @param topMetrics the most frequent metric names among the sampled series, by share
   * @param namesSampled series whose metric name was sampled in the window
   */
  record Snapshot(
      long activeSeries,
      double[] history,
      double seriesPerSecond,
      double bytesPerSecond,
      List<TopMetric> topMetrics,
      long namesSampled) {
    /** The estimate {@code window} ago (the oldest known in {@link #history}), or NaN. */
    double windowAgo() {
      for (double h : history) {
        if (!Double.isNaN(h)) {
          return h;
        }
      }
      return Double.NaN;
    }
  }

  /**
   * A metric name and its share of the tenant's sampled series in the window (a lower bound: the
   * summary may undercount it by {@code 1 / (TopNames.CAPACITY + 1)} per bucket).
   */
  record TopMetric(String name, double share) {}
}
