package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import java.time.Duration;
import java.util.List;

/**
 * The tenant insight's settings ({@code relay.insight.*}).
 *
 * <p>Declares the keys it reads.
 *
 * @param enabled whether routed series are digested and counted per tenant
 * @param window the sliding window over which active series, rates and top metric names are counted
 * @param maxTenants most tenants tracked at once
 */
public record InsightConfig(boolean enabled, Duration window, int maxTenants) {

  public static final ConfigKey ENABLED =
      key(
          "relay.insight.enabled",
          "true",
          "tenant insight: per-tenant active series (estimated), series/s, bytes/s and top metric"
              + " names over the window, served by GET /tenants and /api/v1/tenants and as"
              + " relay_tenant_active_series_estimate and relay_tenant_new_series_per_second; costs"
              + " hashing every series' labels");

  public static final ConfigKey WINDOW =
      key(
          "relay.insight.window",
          "10m",
          "sliding window of the tenant insight (10 buckets of a tenth of it): a series not sent"
              + " for this long stops counting as active");

  public static final ConfigKey MAX_TENANTS =
      key(
          "relay.insight.max-tenants",
          "1000",
          "tenants the insight tracks (1 to 100,000), the most active by series kept each tenth of"
              + " the window; at most about 105 KiB each");

  /** The keys of this section, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS = List.of(ENABLED, WINDOW, MAX_TENANTS);

  /** Shortest {@code relay.insight.window}: ten buckets of at least a second each. */
  public static final Duration MIN_WINDOW = Duration.ofSeconds(10);

  /** The defaults: on, 10 minutes, 1,000 tenants. */
  public static InsightConfig defaults() {
    return new InsightConfig(true, Duration.ofMinutes(10), 1000);
  }

  static InsightConfig load(ConfigValues v) throws ConfigException {
    Duration window = v.duration(WINDOW);
    if (window.compareTo(MIN_WINDOW) < 0) {
      throw v.invalid(WINDOW, "must be at least " + MIN_WINDOW.toSeconds() + "s");
    }
    return new InsightConfig(v.bool(ENABLED), window, v.integer(MAX_TENANTS, 1, 100_000));
  }
}
