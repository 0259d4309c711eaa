package io.prwrelay.server.limits;

import io.prwrelay.core.route.SeriesLimits;
import io.prwrelay.server.config.FileStamp;
import io.prwrelay.server.config.LimitsConfig;
import io.prwrelay.server.config.LimitsConfig.Limits;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.logging.Logger;

/**
 * The per-tenant limits at the ingest edge: each tenant's limits (the defaults, or the overrides
 * file's), its {@link SeriesLimiter} and its {@link SampleBucket}, made when the tenant is first
 * routed and forgotten after two windows without a series. The routers ask it for a tenant's gate
 * ({@link SeriesLimits}); the delivery stage asks it whether a tenant batch's samples fit ({@link
 * #takeSamples}).
 *
 * <p><b>Memory.</b> Every tenant's state ({@value #TENANT_BYTES} bytes, its limited metric names
 * included) and every filter is charged to one {@link LimitsMemory} of {@code
 * relay.limits.max-memory-bytes} before it is allocated. When it is full, a tenant not yet known is
 * not limited at all (its series pass, its batches are not rate limited) until memory is given
 * back, and a known tenant's filters stop growing (more of its new series pass than its limit
 * allows): the bound fails open, counted in {@code relay_limits_memory_refused_total}, because the
 * alternative, dropping series of tenants nobody limited, would be an outage the operator did not
 * ask for.
 *
 * <p><b>Reloads.</b> {@link #tick()}, every {@code relay.limits.reload-period} on the limits' own
 * thread, re-reads the overrides file when its modification time or size changed, applies it to
 * every known tenant, turns the windows when one has passed, and forgets idle tenants. A file that
 * cannot be read or parsed keeps the last good one, is logged with the reason and counted.
 */
public final class TenantLimits implements SeriesLimits {
  private static final Logger LOG = Logger.getLogger(TenantLimits.class.getName());

  /** Bytes charged for each known tenant: its state, bucket and {@link LimitedNames}. */
  static final long TENANT_BYTES = 512 + LimitedNames.BYTES;

  /** What the limits know of one tenant. */
  private static final class Tenant {
    final SeriesLimiter series;
    final SampleBucket samples;
    final LimitedNames names = new LimitedNames();

    Tenant(SeriesLimiter series, SampleBucket samples) {
      this.series = series;
      this.samples = samples;
    }
  }

  private final LimitsConfig config;
  private final LongSupplier nanoTime;
  private final LimitsMemory memory;
  private final Map<String, Tenant> tenants = new ConcurrentHashMap<>();
  private volatile Map<String, Limits> overrides = Map.of();
  private volatile boolean lastReloadSuccessful = true;
  private FileStamp stamp;
  private long windowStart;
  private final ReloadListener listener;

  /** Told of each re-read of the overrides file. */
  public interface ReloadListener {
    void reloaded(boolean success);
  }

  /**
   * @param nanoTime the clock of windows and buckets
   * @param listener told of each re-read of the overrides file
   */
  public TenantLimits(LimitsConfig config, LongSupplier nanoTime, ReloadListener listener) {
    this.config = config;
    this.nanoTime = nanoTime;
    this.memory = new LimitsMemory(config.maxMemoryBytes());
    this.listener = listener;
    this.windowStart = nanoTime.getAsLong();
    if (config.overridesFile() != null) {
      reloadIfChanged();
    }
  }

  /** The limits of {@code tenant} now: the overrides file's, else the defaults. */
  public Limits limitsOf(String tenant) {
    Limits o = overrides.get(tenant);
    return o == null ? config.defaults() : o;
  }

  @Override
  public Gate gate(String tenant) {
    Tenant t = tenant(tenant);
    return t == null ? null : t.series;
  }

  /**
   * Whether a batch of {@code samples} samples of {@code tenant} fits its samples-per-second limit;
   * takes them when it does. Always {@code true} for a tenant without one.
   */
  public boolean takeSamples(String tenant, long samples) {
    Tenant t = tenant(tenant);
    return t == null || t.samples == null || t.samples.take(samples, nanoTime.getAsLong());
  }

  /**
   * Records the metric names of series {@code tenant}'s series limit dropped (sampled, with how
   * many of each the route step saw), for the tenants page.
   */
  public void limitedName(String tenant, String name, long count) {
    Tenant t = tenants.get(tenant);
    if (t != null) {
      t.names.add(name, count);
    }
  }

  /**
   * The state of a tenant with limits, made on first use; {@code null} without limits or memory.
   */
  private Tenant tenant(String tenant) {
    Tenant t = tenants.get(tenant);
    if (t != null || !config.enabled()) {
      return t;
    }
    Limits l = limitsOf(tenant);
    if (l.maxSeries() == 0 && l.samplesPerSecond() == 0) {
      return null;
    }
    synchronized (tenants) {
      t = tenants.get(tenant);
      if (t == null) {
        t = create(l);
        if (t != null) {
          tenants.put(tenant, t);
        }
      }
      return t;
    }
  }

  private Tenant create(Limits l) {
    if (!memory.reserve(TENANT_BYTES)) {
      return null;
    }
    SeriesLimiter series = null;
    if (l.maxSeries() > 0) {
      series = SeriesLimiter.create((int) l.maxSeries(), memory);
      if (series == null) {
        memory.release(TENANT_BYTES);
        return null;
      }
    }
    SampleBucket samples =
        l.samplesPerSecond() > 0
            ? new SampleBucket(l.samplesPerSecond(), l.samplesBurst(), nanoTime.getAsLong())
            : null;
    return new Tenant(series, samples);
  }

  /**
   * Re-reads the overrides file when it changed, turns the windows when one has passed, forgets
   * idle tenants. On the limits' own thread.
   */
  public void tick() {
    if (config.overridesFile() != null) {
      reloadIfChanged();
    }
    long now = nanoTime.getAsLong();
    if (now - windowStart >= config.window().toNanos()) {
      windowStart = now;
      for (Map.Entry<String, Tenant> e : tenants.entrySet()) {
        Tenant t = e.getValue();
        t.names.clear();
        boolean seriesIdle = t.series == null || t.series.rotate();
        if (seriesIdle && (t.samples == null || t.samples.idle(now))) {
          forget(e.getKey(), t);
        }
      }
    }
  }

  private void forget(String tenant, Tenant t) {
    synchronized (tenants) {
      if (tenants.remove(tenant, t)) {
        if (t.series != null) {
          t.series.close();
        }
        memory.release(TENANT_BYTES);
      }
    }
  }

  /** Re-reads the overrides file when its modification time or size changed. */
  void reloadIfChanged() {
    Path file = config.overridesFile();
    FileStamp now = FileStamp.of(List.of(file));
    if (now.equals(stamp)) {
      return;
    }
    stamp = now;
    Map<String, Limits> read;
    try {
      read = OverridesFile.read(file, config.defaults());
    } catch (IOException | RuntimeException e) {
      lastReloadSuccessful = false;
      listener.reloaded(false);
      LOG.warning(
          LimitsConfig.OVERRIDES_FILE.name()
              + " "
              + file
              + " cannot be used, keeping the previous overrides ("
              + overrides.size()
              + " tenants): "
              + (e instanceof java.nio.file.NoSuchFileException ? "no such file" : e.getMessage()));
      return;
    }
    overrides = Map.copyOf(read);
    lastReloadSuccessful = true;
    listener.reloaded(true);
    apply();
    LOG.info(
        LimitsConfig.OVERRIDES_FILE.name()
            + " "
            + file
            + " read: limits of "
            + read.size()
            + " tenants");
  }

  /** Applies the limits now in force to every known tenant. */
  private void apply() {
    long now = nanoTime.getAsLong();
    for (Map.Entry<String, Tenant> e : tenants.entrySet()) {
      Limits l = limitsOf(e.getKey());
      Tenant t = e.getValue();
      boolean seriesFits = (t.series != null) == (l.maxSeries() > 0);
      boolean samplesFit = (t.samples != null) == (l.samplesPerSecond() > 0);
      if (seriesFits && samplesFit) {
        if (t.series != null) {
          t.series.limit((int) l.maxSeries());
        }
        if (t.samples != null) {
          t.samples.limits(l.samplesPerSecond(), l.samplesBurst(), now);
        }
      } else {
        // A limit turned on or off: the tenant starts over with the limits it has now. Turning a
        // series limit on starts an empty window, so its first window admits up to the limit.
        synchronized (tenants) {
          if (tenants.remove(e.getKey(), t)) {
            if (t.series != null) {
              t.series.close();
            }
            memory.release(TENANT_BYTES);
          }
        }
      }
    }
  }

  /** Whether the last look at the overrides file found it usable (or unchanged). */
  public boolean lastReloadSuccessful() {
    return lastReloadSuccessful;
  }

  /** Bytes the limits take now. */
  public long memoryBytes() {
    return memory.used();
  }

  /** Reservations the memory bound refused since start. */
  public long memoryRefused() {
    return memory.refused();
  }

  /**
   * What the tenants page shows of {@code tenant}: its limits, the series its limit counts active
   * in this window, and the names of its dropped series; {@code null} when it has no limits.
   */
  public Usage usage(String tenant) {
    Limits l = limitsOf(tenant);
    if (l.maxSeries() == 0 && l.samplesPerSecond() == 0) {
      return null;
    }
    Tenant t = tenants.get(tenant);
    return new Usage(
        l.maxSeries(),
        t == null || t.series == null ? 0 : t.series.active(),
        l.samplesPerSecond(),
        l.samplesBurst(),
        t == null ? List.of() : t.names.top(5));
  }

  /**
   * One tenant's limits and their use.
   *
   * @param maxSeries its series limit, 0 for none
   * @param activeSeries series its limit counts in the current window
   * @param samplesPerSecond its rate limit, 0 for none
   * @param limitedNames metric names of its dropped series, most first (sampled)
   */
  public record Usage(
      long maxSeries,
      long activeSeries,
      long samplesPerSecond,
      long samplesBurst,
      List<String> limitedNames) {}
}
