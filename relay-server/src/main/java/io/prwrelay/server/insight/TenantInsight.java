package io.prwrelay.server.insight;

import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.SeriesDigests;
import io.prwrelay.core.route.TenantProblem;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.server.config.InsightConfig;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.lane.Lane;
import io.prwrelay.server.lane.LaneObserver;
import io.prwrelay.server.limits.TenantLimits;
import io.prwrelay.server.queue.FileTenantQueue;
import io.prwrelay.server.queue.QueueStore;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Which tenant is exploding, and with which metric: per tenant, the active series estimated over a
 * sliding window from the label set hashes the router digests ({@link SeriesDigests}), series/s and
 * bytes/s, the new series per second, the top metric names by share of the active series, and what
 * its lane and queue are doing. Served by {@code GET /tenants} and {@code GET /api/v1/tenants}
 * ({@link TenantsPage}, {@link TenantsJson}) and as {@code relay_tenant_active_series_estimate},
 * {@code relay_tenant_new_series_per_second} and the per-metric gauges.
 *
 * <p><b>Bound:</b> at most {@code relay.insight.max-tenants} tenants are tracked, each in a {@link
 * TenantWindow} of fixed size. Until the bound is reached every new tenant is tracked; after that a
 * new tenant's series are only counted, and at the start of every bucket (a tenth of the window)
 * the tenants are ranked by the series routed to them in the bucket that just ended: the top that
 * many are tracked from then on (a tenant that falls out loses its window), so a tenant that
 * explodes is tracked within a bucket. Tenants counted but not tracked are themselves bounded (ten
 * times the bound per bucket).
 *
 * <p><b>Cost on the hot path:</b> per request, one map lookup per tenant batch and, per tenant, one
 * lock around the updates of its series (a {@link HyperLogLog} update each; for one series in
 * eight, a name count and a {@link SeriesSample} update). It allocates only a new name's {@code
 * String} (once, {@link MetricNames}) and two small arrays for a new bucket's history estimate
 * (once per tenant and bucket).
 *
 * <p>Also a {@link LaneObserver}: the lane state of each tenant with when and why it changed, and
 * the last failed downstream attempt. Thread-safe.
 */
public final class TenantInsight implements LaneObserver {
  /** Most metric names remembered for display. */
  static final int MAX_NAMES = 16_384;

  /**
   * Most bytes of metric names remembered for display ({@link MetricNames#cost}): 16,384 names of
   * 56 characters, or 6,393 of the longest a router records (256 ASCII characters).
   */
  static final long MAX_NAME_BYTES = 2L << 20;

  /** Characters kept of a lane's reason or a downstream's error message. */
  static final int MAX_MESSAGE_CHARS = 300;

  /** How long a computed snapshot is served before the next read computes a new one. */
  static final long SNAPSHOT_NANOS = 1_000_000_000L;

  private final boolean enabled;
  private final int maxTenants;
  private final long bucketNanos;
  private final long windowSeconds;
  private final LongSupplier nanoTime;
  private final LongSupplier wallMillis;
  private final MetricNames names = new MetricNames(MAX_NAMES, MAX_NAME_BYTES);
  private final Map<String, TenantWindow> tracked = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> candidates = new ConcurrentHashMap<>();
  private final AtomicLong rankedEpoch = new AtomicLong(Long.MIN_VALUE);
  private final Map<String, LaneStatus> lanes = new ConcurrentHashMap<>();
  private final Map<String, LastError> errors = new ConcurrentHashMap<>();
  private final UnlabelledSeries unlabelled;
  private volatile QueueStore store;
  private volatile TenantLimits limits;
  private volatile Cached cached;

  private record Cached(long nanos, List<TenantRow> rows, Map<String, TenantRow> byTenant) {}

  /** A lane's state since {@code sinceMillis}, and why it entered it ({@code null} for healthy). */
  record LaneStatus(Lane.State state, long sinceMillis, String reason) {}

  /** The last failed downstream attempt of a tenant. */
  record LastError(int status, String message, long atMillis) {}

  /**
   * @param nanoTime monotonic clock of the buckets
   * @param wallMillis wall clock of the times shown
   */
  public TenantInsight(InsightConfig config, LongSupplier nanoTime, LongSupplier wallMillis) {
    this.enabled = config.enabled();
    this.maxTenants = config.maxTenants();
    this.bucketNanos = Math.max(1, config.window().toNanos() / TenantWindow.BUCKETS);
    this.windowSeconds = config.window().toSeconds();
    this.nanoTime = nanoTime;
    this.wallMillis = wallMillis;
    this.unlabelled = new UnlabelledSeries(nanoTime);
  }

  /** The insight of {@code config} on the system clocks. */
  public static TenantInsight of(InsightConfig config) {
    return new TenantInsight(config, System::nanoTime, System::currentTimeMillis);
  }

  /** Whether routers digest series for it ({@code relay.insight.enabled}). */
  public boolean enabled() {
    return enabled;
  }

  public int maxTenants() {
    return maxTenants;
  }

  public long windowSeconds() {
    return windowSeconds;
  }

  /** The tenant rules in force: the labels and the default tenant the page names. */
  public void tenantRules(TenantRules rules) {
    unlabelled.rules(rules);
  }

  /** The per-tenant limits, whose limits and use the rows show beside the insight's columns. */
  public void limits(TenantLimits limits) {
    this.limits = limits;
  }

  /** Whether the rows show the per-tenant limits' column. */
  boolean showsLimits() {
    return limits != null;
  }

  /** {@code tenant}'s limits and their use, or {@code null} when it has none. */
  TenantLimits.Usage limitsOf(String tenant) {
    TenantLimits l = limits;
    return l == null ? null : l.usage(tenant);
  }

  /** The on-disk queues of queue mode, whose per-tenant size the rows show. */
  public void queues(QueueStore store) {
    this.store = store;
  }

  /**
   * Records what a request was routed into: per batch, its series and bytes and, when the router
   * digested them, its series' label sets and names. Call before the batches' content is taken.
   *
   * @param result borrowed
   */
  public void record(RouteResult result) {
    if (!enabled) {
      return;
    }
    unlabelled.add(UnlabelledSeries.Fate.DEFAULT_TENANT, result.defaulted(TenantProblem.MISSING));
    unlabelled.add(UnlabelledSeries.Fate.DROPPED, result.dropped(TenantProblem.MISSING));
    long epoch = epoch();
    SeriesDigests digests = result.digests();
    if (digests.nameCount() > 0) {
      names.learn(digests);
    }
    List<TenantBatch> batches = result.batches();
    for (int slot = 0; slot < batches.size(); slot++) {
      TenantBatch b = batches.get(slot);
      TenantWindow w = window(b.tenant(), b.series());
      if (w != null) {
        w.record(epoch, digests, slot, b.series(), b.content().readableBytes());
      }
    }
  }

  /**
   * A request of {@code series} series was answered 400 because one carried none of the tenant
   * labels ({@code relay.tenant.missing=reject}): they count as rejected series without a tenant
   * label (the router stops at the first such series, so its series are all that is known).
   */
  public void rejectedWithoutTenant(int series) {
    if (enabled) {
      unlabelled.add(UnlabelledSeries.Fate.REJECTED, series);
    }
  }

  /** The series without a tenant label of the last minute, by where they went. */
  UnlabelledSeries.Figures unlabelledLastMinute() {
    return unlabelled.lastMinute();
  }

  /**
   * Records a batch forwarded whole to a tenant from a trusted header: its series and bytes count,
   * its label sets do not (such requests are not digested).
   */
  public void recordWhole(String tenant, int series, long bytes) {
    if (!enabled) {
      return;
    }
    long epoch = epoch();
    TenantWindow w = window(tenant, series);
    if (w != null) {
      w.record(epoch, null, 0, series, bytes);
    }
  }

  private long epoch() {
    long epoch = Math.floorDiv(nanoTime.getAsLong(), bucketNanos);
    long ranked = rankedEpoch.get();
    if (ranked != epoch && rankedEpoch.compareAndSet(ranked, epoch) && ranked != Long.MIN_VALUE) {
      rank(epoch - 1);
    }
    return epoch;
  }

  /** The tracked window of {@code tenant}, tracking it while there is room; null otherwise. */
  private TenantWindow window(String tenant, int series) {
    TenantWindow w = tracked.get(tenant);
    if (w != null) {
      return w;
    }
    if (tracked.size() < maxTenants) {
      synchronized (this) {
        if (tracked.size() < maxTenants) {
          return tracked.computeIfAbsent(tenant, t -> new TenantWindow(nanoTime.getAsLong()));
        }
      }
    }
    LongAdder volume = candidates.get(tenant);
    if (volume == null && candidates.size() < 10L * maxTenants) {
      volume = candidates.computeIfAbsent(tenant, t -> new LongAdder());
    }
    if (volume != null) {
      volume.add(series);
    }
    return null;
  }

  /**
   * Keeps the {@code maxTenants} tenants with the most series in bucket {@code epoch}, tracked or
   * counted; the others stop being tracked.
   */
  private synchronized void rank(long epoch) {
    if (candidates.isEmpty()) {
      return;
    }
    Map<String, Long> volume = new HashMap<>();
    tracked.forEach((t, w) -> volume.put(t, w.series(epoch)));
    candidates.forEach((t, v) -> volume.merge(t, v.sum(), Long::sum));
    candidates.clear();
    List<Map.Entry<String, Long>> ranked = new ArrayList<>(volume.entrySet());
    ranked.sort(Map.Entry.<String, Long>comparingByValue().reversed());
    for (int i = 0; i < ranked.size(); i++) {
      String t = ranked.get(i).getKey();
      if (i < maxTenants) {
        tracked.computeIfAbsent(t, x -> new TenantWindow(nanoTime.getAsLong()));
      } else {
        tracked.remove(t);
        errors.remove(t);
      }
    }
  }

  /** Tenants tracked now. */
  public int trackedTenants() {
    return tracked.size();
  }

  /**
   * The active series estimate of {@code tenant} as of the last snapshot (at most a second old), or
   * NaN when the tenant is not tracked.
   */
  public double activeSeries(String tenant) {
    TenantRow row = snapshot().byTenant().get(tenant);
    return row == null ? Double.NaN : row.activeSeries();
  }

  /**
   * The new series per second of {@code tenant} as of the last snapshot, or NaN when it is not
   * tracked or not yet known ({@link TenantWindow.Snapshot#newSeriesPerSecond}).
   */
  public double newSeriesPerSecond(String tenant) {
    TenantRow row = snapshot().byTenant().get(tenant);
    return row == null ? Double.NaN : row.newSeriesPerSecond();
  }

  /**
   * The top metric names of {@code tenant} as of the last snapshot (at most {@value
   * MetricBreakdown#TOP}, most active series first), as {@code figure(name, activeSeries,
   * newSeriesPerSecond)} makes them; empty when the tenant is not tracked.
   */
  public <T> List<T> topMetrics(String tenant, MetricFigure<T> figure) {
    TenantRow row = snapshot().byTenant().get(tenant);
    if (row == null) {
      return List.of();
    }
    List<T> out = new ArrayList<>();
    for (TenantWindow.TopMetric m : row.window().topMetrics()) {
      out.add(figure.of(m.name(), m.share() * row.activeSeries(), m.newSeriesPerSecond()));
    }
    return out;
  }

  /** What {@link #topMetrics} makes of one metric name. */
  @FunctionalInterface
  public interface MetricFigure<T> {
    T of(String name, double activeSeries, double newSeriesPerSecond);
  }

  /** Every tracked tenant, most active series first; computed at most once a second. */
  public List<TenantRow> rows() {
    return snapshot().rows();
  }

  private Cached snapshot() {
    long now = nanoTime.getAsLong();
    Cached c = cached;
    if (c != null && now - c.nanos() < SNAPSHOT_NANOS) {
      return c;
    }
    List<TenantRow> rows = new ArrayList<>();
    QueueStore q = store;
    for (Map.Entry<String, TenantWindow> e : tracked.entrySet()) {
      String tenant = e.getKey();
      TenantWindow.Snapshot s = e.getValue().snapshot(now, bucketNanos, names);
      FileTenantQueue queue = q == null ? null : q.find(tenant);
      OptionalLong oldest = queue == null ? OptionalLong.empty() : queue.oldestAppendMillis();
      rows.add(
          new TenantRow(
              tenant,
              s,
              lanes.get(tenant),
              q == null ? -1 : queue == null ? 0 : queue.bytes(),
              oldest.isPresent() ? oldest.getAsLong() : -1,
              errors.get(tenant)));
    }
    rows.sort(
        Comparator.comparingLong(TenantRow::activeSeries)
            .reversed()
            .thenComparing(TenantRow::tenant));
    Map<String, TenantRow> byTenant = new HashMap<>();
    for (TenantRow r : rows) {
      byTenant.put(r.tenant(), r);
    }
    Cached fresh = new Cached(now, List.copyOf(rows), byTenant);
    cached = fresh;
    return fresh;
  }

  /** The wall clock the rows' times are read against. */
  public long nowMillis() {
    return wallMillis.getAsLong();
  }

  /** Whether the relay runs in queue mode (the rows then show queue sizes). */
  public boolean queueMode() {
    return store != null;
  }

  @Override
  public void stateChanged(String tenant, Lane.State state, String reason, long delayNanos) {
    lanes.put(
        tenant,
        new LaneStatus(
            state,
            wallMillis.getAsLong(),
            state == Lane.State.HEALTHY || reason == null ? null : shorten(reason)));
  }

  @Override
  public void laneForgotten(String tenant) {
    lanes.remove(tenant);
  }

  @Override
  public void attempt(String tenant, int fragments, AttemptOutcome outcome, long nanos) {
    if (outcome.success()) {
      return;
    }
    if (errors.containsKey(tenant) || errors.size() < 2L * maxTenants) {
      errors.put(
          tenant,
          new LastError(outcome.status(), shorten(outcome.describe()), wallMillis.getAsLong()));
    }
  }

  /** {@code message} cut to {@value #MAX_MESSAGE_CHARS} characters and {@code …} when longer. */
  static String shorten(String message) {
    if (message.length() <= MAX_MESSAGE_CHARS) {
      return message;
    }
    int end = MAX_MESSAGE_CHARS;
    if (Character.isHighSurrogate(message.charAt(end - 1))) {
      end--;
    }
    return message.substring(0, end) + "…";
  }
}
