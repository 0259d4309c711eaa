package io.prwrelay.server.insight;

import io.prwrelay.core.route.TenantRules;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * The series of the last minute that carried none of the tenant labels, by where they went: to the
 * default tenant, dropped, or in requests answered 400 ({@code relay.tenant.missing}). Shown in one
 * line above the table of {@code /tenants}, so that such series are seen however few they are
 * (Prometheus's own {@code ALERTS}, a target without the label) and not only when they are most of
 * the traffic (the minute's warning of {@code metrics.TenantLabelWatch}).
 *
 * <p>Six buckets of ten seconds on the monotonic clock: the figure is the current bucket and the
 * five before it, so it covers 50 to 60 seconds. Counting costs an atomic add per fate and request
 * with such series; an add racing with the start of a new bucket may be lost. Fixed size: 6 × 3
 * counts and 6 bucket numbers, nothing a client chose.
 */
final class UnlabelledSeries {
  /** Where a series without a tenant label went. */
  enum Fate {
    DEFAULT_TENANT,
    DROPPED,
    REJECTED
  }

  /** The last minute's counts, and what the line names. */
  record Figures(
      long defaultTenant, long dropped, long rejected, String labels, String defaultTenantId) {
    long total() {
      return defaultTenant + dropped + rejected;
    }
  }

  static final int BUCKETS = 6;
  static final long BUCKET_NANOS = TimeUnit.SECONDS.toNanos(10);
  private static final Fate[] FATES = Fate.values();

  private final LongSupplier nanoTime;
  private final AtomicLongArray counts = new AtomicLongArray(BUCKETS * FATES.length);

  /** The bucket number each slot counts, {@link Long#MIN_VALUE} for none yet. */
  private final AtomicLongArray epochs = new AtomicLongArray(BUCKETS);

  private volatile String labels;
  private volatile String defaultTenantId;

  UnlabelledSeries(LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
    for (int i = 0; i < BUCKETS; i++) {
      epochs.set(i, Long.MIN_VALUE);
    }
    rules(TenantRules.builder().build());
  }

  /** The tenant labels and the default tenant the line names. */
  void rules(TenantRules rules) {
    labels = String.join(", ", rules.labels());
    defaultTenantId = rules.defaultTenantId();
  }

  /** {@code series} series without a tenant label went where {@code fate} says. */
  void add(Fate fate, long series) {
    if (series <= 0) {
      return;
    }
    long epoch = Math.floorDiv(nanoTime.getAsLong(), BUCKET_NANOS);
    int slot = (int) Math.floorMod(epoch, (long) BUCKETS);
    long counted = epochs.get(slot);
    if (counted != epoch && epochs.compareAndSet(slot, counted, epoch)) {
      for (int f = 0; f < FATES.length; f++) {
        counts.set(slot * FATES.length + f, 0);
      }
    }
    counts.addAndGet(slot * FATES.length + fate.ordinal(), series);
  }

  /** The counts of the current bucket and the five before it. */
  Figures lastMinute() {
    long epoch = Math.floorDiv(nanoTime.getAsLong(), BUCKET_NANOS);
    long[] sums = new long[FATES.length];
    for (int slot = 0; slot < BUCKETS; slot++) {
      long counted = epochs.get(slot);
      if (counted == Long.MIN_VALUE || epoch - counted < 0 || epoch - counted >= BUCKETS) {
        continue;
      }
      for (int f = 0; f < FATES.length; f++) {
        sums[f] += counts.get(slot * FATES.length + f);
      }
    }
    return new Figures(
        sums[Fate.DEFAULT_TENANT.ordinal()],
        sums[Fate.DROPPED.ordinal()],
        sums[Fate.REJECTED.ordinal()],
        labels,
        defaultTenantId);
  }
}
