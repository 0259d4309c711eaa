package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import io.prwrelay.core.route.TenantRules;
import java.util.List;

/**
 * The metrics settings ({@code relay.metrics.*}) and the tenant insight's ({@code
 * relay.insight.*}).
 *
 * <p>Declares the {@code relay.metrics.*} keys; {@link #COUNT_SAMPLES} is read by {@link
 * TenantConfig}, since it decides how far the router reads a series.
 *
 * @param maxTenants top tenants by volume that get their own metric series
 * @param insight the tenant insight's settings
 */
public record MetricsConfig(int maxTenants, InsightConfig insight) {

  public static final ConfigKey MAX_TENANTS =
      key(
          "relay.metrics.max-tenants",
          "100",
          "top tenants by volume that get their own metric series; the rest are counted as tenant=\"other\"");

  public static final ConfigKey COUNT_SAMPLES =
      key(
          "relay.metrics.count-samples",
          String.valueOf(TenantRules.DEFAULT_COUNT_SAMPLES),
          "count the samples of PRW 1.0 requests per tenant (relay_tenant_samples_*_total); costs"
              + " reading every field of every series instead of stopping at the tenant label");

  /** The keys of this section, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS = List.of(MAX_TENANTS, COUNT_SAMPLES);

  static MetricsConfig load(ConfigValues v) throws ConfigException {
    return new MetricsConfig(v.integer(MAX_TENANTS, 0, 100_000), InsightConfig.load(v));
  }
}
