package io.prwrelay.server.config;

/**
 * The metrics settings ({@code relay.metrics.*}) and the tenant insight's ({@code
 * relay.insight.*}).
 *
 * @param maxTenants top tenants by volume that get their own metric series
 * @param insight the tenant insight's settings
 */
public record MetricsConfig(int maxTenants, InsightConfig insight) {
  static MetricsConfig load(ConfigValues v) throws ConfigException {
    return new MetricsConfig(
        v.integer(ConfigKeys.METRICS_MAX_TENANTS, 0, 100_000), InsightConfig.load(v));
  }
}
