package io.prwrelay.server.insight;

import io.prwrelay.core.route.SeriesDigests;
import java.util.List;

/**
 * One tenant's sliding window: {@value #BUCKETS} buckets, each a tenth of the window, each holding
 * a {@link HyperLogLog} of the label set hashes routed to the tenant in it, a {@link TopNames}
 * summary of their sampled metric names, a {@link SeriesSample} of their sampled series, and the
 * series and bytes routed. The window's active series are the estimate of the union of its buckets,
 * so a series not sent for a whole window drops out; its new series, the estimate of the union less
 * that of the buckets before the previous one; its top metrics, the merged samples' names ({@link
 * MetricBreakdown}).
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
 * TopNames} make about 54 KiB of heap per tenant (measured in docs/tenant-insight.md), and 10
 * {@link SeriesSample}s of 5.1 KiB about 105 KiB.
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
    final SeriesSample sample = new SeriesSample();
    long series;
    long bytes;

    /** Series whose name was sampled but that had none. */
    long unnamed;

    void reset(long e) {
      epoch = e;
      hll.reset();
      names.clear();
      sample.clear();
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
    SeriesSample sample = b.sample;
    for (int e = digests.first(slot); e != SeriesDigests.END; e = digests.next(e)) {
      long hash = digests.hash(e);
      hll.add(hash);
      int name = digests.name(e);
      // Only the series whose name was sampled (one in eight) go further.
      if (name >= 0) {
        long nameHash = digests.nameHash(name);
        names.add(nameHash);
        sample.add(SeriesSample.key(hash), nameHash);
      } else if (name == SeriesDigests.NO_NAME) {
        b.unnamed++;
        sample.add(SeriesSample.key(hash), MetricBreakdown.UNNAMED);
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
    MetricBreakdown breakdown = new MetricBreakdown();
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
      breakdown.add(b.epoch, b.sample, b.names, b.unnamed);
    }
    double active = HyperLogLog.estimateUnion(union, counters);
    // Seconds the window's buckets cover: from the oldest bucket's start, or from when the tenant
    // began to be tracked if later.
    long start = Math.max((epoch - BUCKETS + 1) * bucketNanos, sinceNanos);
    double seconds = (nowNanos - start) / 1e9;
    Churn churn = churn(epoch, nowNanos, bucketNanos, active);
    List<TopMetric> top =
        breakdown.trafficSampled() == 0
            ? List.of()
            : breakdown.top(churn.since(), churn.perSecond(), names);
    double[] past = new double[BUCKETS];
    for (int k = 0; k < BUCKETS; k++) {
      long e = epoch - BUCKETS + 1 + k;
      int i = index(e);
      past[k] = historyEpoch[i] == e ? history[i] : Double.NaN;
    }
    return new Snapshot(
        Math.round(active),
        past,
        seconds <= 0 ? 0 : series / seconds,
        seconds <= 0 ? 0 : bytes / seconds,
        churn.perSecond(),
        top,
        breakdown.trafficSampled());
  }

  /** New series per second since the start of epoch {@code since} (NaN while warming up). */
  private record Churn(long since, double perSecond) {}

  /**
   * The series first seen since the start of the previous bucket (or of the current one), per
   * second over that time but at least a bucket: the window's estimate now less the estimate of the
   * buckets before, which must include a whole bucket in which the tenant was tracked (else every
   * series would look new: NaN). Series the window holds twice are counted once by both estimates,
   * so steady series read exactly 0.
   */
  private Churn churn(long epoch, long nowNanos, long bucketNanos, double active) {
    long since;
    if (sinceNanos <= (epoch - 2) * bucketNanos) {
      since = epoch - 1;
    } else if (sinceNanos <= (epoch - 1) * bucketNanos) {
      since = epoch;
    } else {
      return new Churn(epoch, Double.NaN);
    }
    double before = estimateBefore(epoch, since);
    double fresh = Math.max(0, active - before);
    // Over at least a bucket: series come in bursts (a scrape's worth at once), which the first
    // seconds of a bucket would read as a rate many times too high.
    double seconds = Math.max(nowNanos - since * bucketNanos, bucketNanos) / 1e9;
    return new Churn(since, fresh / seconds);
  }

  private long beforeEpoch = Long.MIN_VALUE;
  private final double[] before = new double[2];

  /**
   * The estimate of the window's buckets before {@code since} (which is {@code epoch} or {@code
   * epoch - 1}): closed buckets, so computed once per epoch.
   */
  private double estimateBefore(long epoch, long since) {
    if (beforeEpoch != epoch) {
      HyperLogLog[] counters = new HyperLogLog[BUCKETS];
      for (int k = 0; k < 2; k++) {
        int n = 0;
        for (Bucket b : ring) {
          if (b.epoch > epoch - BUCKETS && b.epoch < epoch - k) {
            counters[n++] = b.hll;
          }
        }
        before[k] = HyperLogLog.estimateUnion(counters, n);
      }
      beforeEpoch = epoch;
    }
    return before[(int) (epoch - since)];
  }

  /**
   * One tenant's window as read.
   *
   * @param activeSeries estimated distinct label sets in the window
   * @param history the window's estimate when each of the last {@value #BUCKETS} buckets began,
   *     oldest first; NaN where unknown (the tenant was not tracked yet)
   * @param seriesPerSecond series routed per second over the window
   * @param bytesPerSecond uncompressed batch bytes per second over the window
   * @param newSeriesPerSecond series first seen (not in the window's earlier buckets) per second
   *     since the start of the previous bucket; NaN until the tenant has been tracked for a whole
   *     bucket
   * @param topMetrics the metric names with the most active series, by share
   * @param namesSampled series whose metric name was sampled in the window
   */
  record Snapshot(
      long activeSeries,
      double[] history,
      double seriesPerSecond,
      double bytesPerSecond,
      double newSeriesPerSecond,
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
   * A metric name of a tenant, from the window's {@link SeriesSample} and {@link TopNames}.
   *
   * @param share its share of the tenant's active series (standard error {@code sqrt(share (1 -
   *     share) / 256)} and the one-in-eight sampling of names: docs/tenant-insight.md)
   * @param trafficShare its share of the series routed in the window (a lower bound: the summary
   *     may undercount it by {@code 1 / (TopNames.CAPACITY + 1)} per bucket)
   * @param newSeriesPerSecond the tenant's new series per second that are this name's (NaN when the
   *     tenant's is unknown)
   */
  record TopMetric(String name, double share, double trafficShare, double newSeriesPerSecond) {}
}
