package io.prwrelay.server.config;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The per-tenant limits' settings ({@code relay.limits.*}).
 *
 * @param defaults the limits of a tenant the overrides file does not name
 * @param window the series limit's window: a series counts as active while it was sent in the
 *     current or the previous window
 * @param overridesFile per-tenant limits re-read while running, or {@code null}
 * @param reloadPeriod how often the overrides file is looked at (and windows turned)
 * @param maxMemoryBytes most bytes the series limits' filters take, all tenants together
 */
public record LimitsConfig(
    Limits defaults,
    Duration window,
    Path overridesFile,
    Duration reloadPeriod,
    long maxMemoryBytes) {

  /**
   * One tenant's limits; 0 is no limit.
   *
   * @param maxSeries active series ({@code max-series-per-tenant})
   * @param samplesPerSecond samples a second ({@code samples-per-second})
   * @param samplesBurst the samples bucket's size ({@code samples-burst})
   */
  public record Limits(long maxSeries, long samplesPerSecond, long samplesBurst) {
    /** Most {@code max-series-per-tenant}: 2^30 series, a filter of 2 GiB at most. */
    public static final long MAX_SERIES = 1L << 30;

    /** No limit at all. */
    public static final Limits NONE = new Limits(0, 0, 0);
  }

  /** Shortest {@code relay.limits.active-series-window}. */
  public static final Duration MIN_WINDOW = Duration.ofSeconds(10);

  /** Whether any tenant can be limited: a default is set or an overrides file may set one. */
  public boolean enabled() {
    return overridesFile != null || defaults.maxSeries() > 0 || defaults.samplesPerSecond() > 0;
  }

  /** No limits, no overrides file. */
  public static LimitsConfig off() {
    return new LimitsConfig(
        Limits.NONE, Duration.ofMinutes(10), null, Duration.ofSeconds(10), 64L << 20);
  }

  static LimitsConfig load(ConfigValues v) throws ConfigException {
    long maxSeries = v.integer(ConfigKeys.LIMITS_MAX_SERIES, 0, (int) Limits.MAX_SERIES);
    Duration window = v.duration(ConfigKeys.LIMITS_ACTIVE_SERIES_WINDOW);
    if (window.compareTo(MIN_WINDOW) < 0) {
      throw v.invalid(
          ConfigKeys.LIMITS_ACTIVE_SERIES_WINDOW,
          "must be at least " + MIN_WINDOW.toSeconds() + "s");
    }
    long rate = v.integer(ConfigKeys.LIMITS_SAMPLES_PER_SECOND, 0, Integer.MAX_VALUE);
    long burst = v.integer(ConfigKeys.LIMITS_SAMPLES_BURST, 1, Integer.MAX_VALUE);
    String file = v.string(ConfigKeys.LIMITS_OVERRIDES_FILE);
    Duration reload = v.duration(ConfigKeys.LIMITS_RELOAD_PERIOD);
    long memory = v.bytes(ConfigKeys.LIMITS_MAX_MEMORY_BYTES, 1L << 20, 1L << 40);
    return new LimitsConfig(
        new Limits(maxSeries, rate, burst),
        window,
        file.isEmpty() ? null : Path.of(file),
        reload,
        memory);
  }
}
