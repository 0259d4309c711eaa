package io.prwrelay.server.insight;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A tenant's top metric names over its window, ranked by their share of its active series: the
 * buckets' {@link SeriesSample}s merged into the {@value SeriesSample#CAPACITY} smallest keys of
 * the window (exactly the bottom-k sample of the window's distinct series, each with the first
 * bucket it was seen in), counted by name. Each name's share of the sample is its share of the
 * active series; its share of the sample's series first seen since {@code newSince} divides the
 * tenant's new series per second among the names; its share of the traffic comes from the buckets'
 * {@link TopNames}. Built on a read (the page, the API, a scrape), never per series.
 */
final class MetricBreakdown {
  /** Names reported per tenant. */
  static final int TOP = 5;

  /** The name hash a sampled series without a metric name is kept under; never shown. */
  static final long UNNAMED = 0;

  private final Map<Long, long[]> merged = new HashMap<>();
  private final Map<Long, Long> traffic = new HashMap<>();
  private long trafficSampled;

  /** Adds bucket {@code epoch}'s sample and name counts. */
  void add(long epoch, SeriesSample sample, TopNames names, long unnamed) {
    for (int i = 0; i < sample.size(); i++) {
      long[] e = merged.get(sample.key(i));
      if (e == null) {
        merged.put(sample.key(i), new long[] {sample.name(i), epoch});
      } else if (epoch < e[1]) {
        e[1] = epoch;
      }
    }
    for (int i = 0; i < names.size(); i++) {
      traffic.merge(names.key(i), names.count(i), Long::sum);
    }
    trafficSampled += names.total() + unnamed;
  }

  /** Series whose names were sampled for the traffic shares. */
  long trafficSampled() {
    return trafficSampled;
  }

  /**
   * The top {@value #TOP} names by share of the active series.
   *
   * @param newSince the first epoch whose first sightings count as new
   * @param newPerSecond the tenant's new series per second since then (NaN when unknown)
   * @param names resolves name hashes
   */
  List<TenantWindow.TopMetric> top(long newSince, double newPerSecond, MetricNames names) {
    List<Long> keys = new ArrayList<>(merged.keySet());
    keys.sort(null);
    int kept = Math.min(keys.size(), SeriesSample.CAPACITY);
    Map<Long, long[]> byName = new HashMap<>();
    long fresh = 0;
    for (int i = 0; i < kept; i++) {
      long[] e = merged.get(keys.get(i));
      long[] c = byName.computeIfAbsent(e[0], n -> new long[2]);
      c[0]++;
      if (e[1] >= newSince) {
        c[1]++;
        fresh++;
      }
    }
    long newTotal = fresh;
    List<Map.Entry<Long, long[]>> ranked = new ArrayList<>(byName.entrySet());
    ranked.removeIf(e -> e.getKey() == UNNAMED);
    ranked.sort(
        (x, y) -> {
          int c = Long.compare(y.getValue()[0], x.getValue()[0]);
          return c != 0
              ? c
              : Long.compare(
                  traffic.getOrDefault(y.getKey(), 0L), traffic.getOrDefault(x.getKey(), 0L));
        });
    List<TenantWindow.TopMetric> top = new ArrayList<>();
    for (Map.Entry<Long, long[]> e : ranked.subList(0, Math.min(TOP, ranked.size()))) {
      long hash = e.getKey();
      String name = names.get(hash);
      double rate =
          Double.isNaN(newPerSecond)
              ? Double.NaN
              : newTotal == 0 ? 0 : newPerSecond * e.getValue()[1] / newTotal;
      top.add(
          new TenantWindow.TopMetric(
              name == null ? "#" + Long.toHexString(hash) : name,
              (double) e.getValue()[0] / kept,
              trafficSampled == 0 ? 0 : (double) traffic.getOrDefault(hash, 0L) / trafficSampled,
              rate));
    }
    return top;
  }
}
