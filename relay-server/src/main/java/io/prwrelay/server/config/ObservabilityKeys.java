package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import io.prwrelay.core.route.TenantRules;
import java.util.List;

/**
 * The keys of what the relay tells about itself: per-tenant metrics ({@code relay.metrics.*}), the
 * tenant insight ({@code relay.insight.*}) and logging ({@code relay.log.*}).
 *
 * <p>One group of the catalogue: {@link ConfigKeys} names each of these keys and lists them, in the
 * order of {@link #KEYS}, for {@code --help}, docs/configuration.md and the loaders.
 */
final class ObservabilityKeys {
  private ObservabilityKeys() {}

  static final ConfigKey METRICS_MAX_TENANTS =
      key(
          "relay.metrics.max-tenants",
          "100",
          "top tenants by volume that get their own metric series; the rest are counted as tenant=\"other\"");

  static final ConfigKey METRICS_COUNT_SAMPLES =
      key(
          "relay.metrics.count-samples",
          String.valueOf(TenantRules.DEFAULT_COUNT_SAMPLES),
          "count the samples of PRW 1.0 requests per tenant (relay_tenant_samples_*_total); costs"
              + " reading every field of every series instead of stopping at the tenant label");

  static final ConfigKey INSIGHT_ENABLED =
      key(
          "relay.insight.enabled",
          "true",
          "tenant insight: per-tenant active series (estimated), series/s, bytes/s and top metric"
              + " names over the window, served by GET /tenants and /api/v1/tenants and as"
              + " relay_tenant_active_series_estimate and relay_tenant_new_series_per_second; costs"
              + " hashing every series' labels");

  static final ConfigKey INSIGHT_WINDOW =
      key(
          "relay.insight.window",
          "10m",
          "sliding window of the tenant insight (10 buckets of a tenth of it): a series not sent"
              + " for this long stops counting as active");

  static final ConfigKey INSIGHT_MAX_TENANTS =
      key(
          "relay.insight.max-tenants",
          "1000",
          "tenants the insight tracks (1 to 100,000), the most active by series kept each tenth of"
              + " the window; at most about 105 KiB each");

  static final ConfigKey LOG_FAILURE_INTERVAL =
      key(
          "relay.log.failure-interval",
          "10s",
          "at most one log line per tenant and failure kind per interval; while more than 5"
              + " tenants fail for the same reason, one line per reason and interval instead");

  static final ConfigKey LOG_LEVEL =
      key(
          "relay.log.level",
          "info",
          "least severe level logged: error, warn, info or debug (ignored when"
              + " java.util.logging.config.file is set)");

  /** The keys of this group, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS =
      List.of(
          METRICS_MAX_TENANTS,
          METRICS_COUNT_SAMPLES,
          INSIGHT_ENABLED,
          INSIGHT_WINDOW,
          INSIGHT_MAX_TENANTS,
          LOG_FAILURE_INTERVAL,
          LOG_LEVEL);
}
