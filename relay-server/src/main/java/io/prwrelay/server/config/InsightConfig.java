package io.prwrelay.server.config;

import java.time.Duration;

/**
 * The tenant insight's settings ({@code relay.insight.*}).
 *
 * @param enabled whether routed series are digested and counted per tenant
 * @param window the sliding window over which active series, rates and top metric names are counted
 * @param maxTenants most tenants tracked at once
 */
public record InsightConfig(boolean enabled, Duration window, int maxTenants) {
  /** Shortest {@code relay.insight.window}: ten buckets of at least a second each. */
  public static final Duration MIN_WINDOW = Duration.ofSeconds(10);

  /** The defaults: on, 10 minutes, 1,000 tenants. */
  public static InsightConfig defaults() {
    return new InsightConfig(true, Duration.ofMinutes(10), 1000);
  }

  static InsightConfig load(ConfigValues v) throws ConfigException {
    Duration window = v.duration(ConfigKeys.INSIGHT_WINDOW);
    if (window.compareTo(MIN_WINDOW) < 0) {
      throw v.invalid(
          ConfigKeys.INSIGHT_WINDOW, "must be at least " + MIN_WINDOW.toSeconds() + "s");
    }
    return new InsightConfig(
        v.bool(ConfigKeys.INSIGHT_ENABLED),
        window,
        v.integer(ConfigKeys.INSIGHT_MAX_TENANTS, 1, 100_000));
  }
}
