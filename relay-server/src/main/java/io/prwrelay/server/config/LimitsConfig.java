package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The per-tenant limits' settings ({@code relay.limits.*}).
 *
 * <p>Declares the keys it reads.
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

  public static final ConfigKey MAX_SERIES_PER_TENANT =
      key(
          "relay.limits.max-series-per-tenant",
          "0",
          "active series a tenant may have (0: no limit): a series new to the tenant beyond it is"
              + " dropped, series already active keep flowing; active means sent in the current or"
              + " the previous relay.limits.active-series-window");

  public static final ConfigKey ACTIVE_SERIES_WINDOW =
      key(
          "relay.limits.active-series-window",
          "10m",
          "window of the series limit: a series not sent for one to two windows stops counting");

  public static final ConfigKey SAMPLES_PER_SECOND =
      key(
          "relay.limits.samples-per-second",
          "0",
          "samples a tenant may send per second (0: no limit); a tenant batch over it is answered"
              + " as a downstream 429 for that tenant alone (relay.delivery.throttled.policy)");

  public static final ConfigKey SAMPLES_BURST =
      key(
          "relay.limits.samples-burst",
          "200000",
          "samples a tenant may send at once above its rate (the token bucket's size); a batch"
              + " larger than this is refused every time");

  public static final ConfigKey OVERRIDES_FILE =
      key(
          "relay.limits.overrides-file",
          "",
          "file of per-tenant limits (lines tenant.max-series-per-tenant = N,"
              + " tenant.samples-per-second = N, tenant.samples-burst = N), re-read while running"
              + " when it changes; a bad file keeps the last good one");

  public static final ConfigKey RELOAD_PERIOD =
      key(
          "relay.limits.reload-period",
          "10s",
          "how often the overrides file's modification time and size are checked");

  public static final ConfigKey MAX_MEMORY_BYTES =
      key(
          "relay.limits.max-memory-bytes",
          "64MiB",
          "memory the series limits' filters may take, all tenants together; at the bound a new"
              + " tenant is not series-limited and a filter stops growing (counted)");

  /** The keys of this section, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS =
      List.of(
          MAX_SERIES_PER_TENANT,
          ACTIVE_SERIES_WINDOW,
          SAMPLES_PER_SECOND,
          SAMPLES_BURST,
          OVERRIDES_FILE,
          RELOAD_PERIOD,
          MAX_MEMORY_BYTES);

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
    long maxSeries = v.integer(MAX_SERIES_PER_TENANT, 0, (int) Limits.MAX_SERIES);
    Duration window = v.duration(ACTIVE_SERIES_WINDOW);
    if (window.compareTo(MIN_WINDOW) < 0) {
      throw v.invalid(ACTIVE_SERIES_WINDOW, "must be at least " + MIN_WINDOW.toSeconds() + "s");
    }
    long rate = v.integer(SAMPLES_PER_SECOND, 0, Integer.MAX_VALUE);
    long burst = v.integer(SAMPLES_BURST, 1, Integer.MAX_VALUE);
    String file = v.string(OVERRIDES_FILE);
    Duration reload = v.duration(RELOAD_PERIOD);
    long memory = v.bytes(MAX_MEMORY_BYTES, 1L << 20, 1L << 40);
    return new LimitsConfig(
        new Limits(maxSeries, rate, burst),
        window,
        file.isEmpty() ? null : Path.of(file),
        reload,
        memory);
  }
}
