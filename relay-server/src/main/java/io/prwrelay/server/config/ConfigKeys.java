package io.prwrelay.server.config;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The catalogue of the relay's configuration keys. Each key's name, default and meaning is declared
 * once, as a constant of the section that loads it ({@link ServerConfig#PORT}, {@link
 * DeliveryConfig#QUEUE_DIR}, {@link LimitsConfig#MAX_SERIES_PER_TENANT}, ...); {@link #ALL}
 * assembles the sections' keys in the order {@code --help} and docs/configuration.md list them, and
 * {@link ConfigSources} resolves every key of it. Messages that mention a key use {@link
 * ConfigKey#name()} of the section's constant.
 */
public final class ConfigKeys {
  private ConfigKeys() {}

  /** Keys that existed once, with what replaced them, for a helpful startup error. */
  public static final Map<String, String> REPLACED =
      Map.of(
          "relay.downstream.max-concurrent-sends",
          "relay.lanes.max-concurrent-sends (downstream requests in flight per tenant)");

  /**
   * Every key, section after section, in the order {@code --help} and docs/configuration.md list
   * them.
   */
  public static final List<ConfigKey> ALL =
      Stream.of(
              ServerConfig.KEYS,
              InboundAuthConfig.KEYS,
              IngressTlsConfig.KEYS,
              DownstreamConfig.KEYS,
              DeliveryConfig.KEYS,
              TenantConfig.KEYS,
              LimitsConfig.KEYS,
              MetricsConfig.KEYS,
              InsightConfig.KEYS,
              LogConfig.KEYS)
          .flatMap(List::stream)
          .toList();
}
