package io.prwrelay.server.isolation;

import java.util.Collection;

/** Quantiles of answer times, in milliseconds. */
final class Latencies {
  private final long[] sorted;

  Latencies(Collection<Long> nanos) {
    sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
  }

  int count() {
    return sorted.length;
  }

  /** The {@code q} quantile (nearest rank) in milliseconds; NaN when there is no sample. */
  double quantileMillis(double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(q * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1e6;
  }

  double p50() {
    return quantileMillis(0.50);
  }

  double p99() {
    return quantileMillis(0.99);
  }

  double maxMillis() {
    return sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1] / 1e6;
  }

  @Override
  public String toString() {
    return String.format(
        "n=%d p50=%.2fms p99=%.2fms max=%.2fms", count(), p50(), p99(), maxMillis());
  }
}
