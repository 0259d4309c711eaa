package io.prwrelay.server.config;

/**
 * The metrics settings ({@code relay.metrics.*}).
 *
 * @param maxTenants top tenants by volume that get their own metric series
 */
public record MetricsConfig(int maxTenants) {
  static MetricsConfig load(ConfigValues v) throws ConfigException {
    return new MetricsConfig(v.integer(ConfigKeys.METRICS_MAX_TENANTS, 0, 100_000));
  }
}
