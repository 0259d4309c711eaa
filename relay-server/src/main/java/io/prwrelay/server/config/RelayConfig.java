package io.prwrelay.server.config;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The relay's configuration: immutable, validated once at startup, in one typed section per
 * component; each component is handed only its section.
 *
 * <p>Every key of {@link ConfigKeys} can come from a {@code -Dkey=value} system property, an
 * environment variable ({@code relay.downstream.url} → {@code RELAY_DOWNSTREAM_URL}), or a
 * properties file given with {@code --config}; the first of these that sets a key wins, then the
 * default. An unknown {@code relay.*} key in the file or in system properties, or a value that does
 * not parse, stops startup with a {@link ConfigException} naming the key. Secrets (passwords,
 * tokens) are never part of {@link #describe()} or of an error.
 *
 * @param limits the per-tenant limits at the ingest edge
 * @param warnings settings that do not stop startup but are ignored or questionable, one line each
 *     naming the key, for the startup log
 * @param explicitKeys the keys set by a file, a system property or the environment rather than left
 *     at their defaults ({@link RetainedMemory} lowers only bounds left at their defaults)
 */
public record RelayConfig(
    ServerConfig server,
    DownstreamConfig downstream,
    DeliveryConfig delivery,
    TenantConfig tenant,
    MetricsConfig metrics,
    LimitsConfig limits,
    LogConfig log,
    List<String> warnings,
    Set<String> explicitKeys) {

  /** Loads the configuration with the defaults only (used by tests and the demo). */
  public static RelayConfig defaults() throws ConfigException {
    return load(null, Map.of(), Map.of());
  }

  /**
   * Loads and validates the configuration.
   *
   * @param file properties file, or {@code null}
   * @param systemProperties {@code -D} values (only {@code relay.*} keys are looked at)
   * @param environment environment variables (only those of known keys are looked at)
   * @throws ConfigException naming the key of the first problem found
   */
  public static RelayConfig load(
      Path file, Map<String, String> systemProperties, Map<String, String> environment)
      throws ConfigException {
    ConfigValues v = ConfigSources.resolve(ConfigKeys.ALL, file, systemProperties, environment);
    ServerConfig server = ServerConfig.load(v);
    DownstreamConfig downstream = DownstreamConfig.load(v);
    DeliveryConfig delivery = DeliveryConfig.load(v);
    TenantConfig tenant = TenantConfig.load(v, downstream.tenantHeader());
    RelayConfig config =
        new RelayConfig(
            server,
            downstream,
            delivery,
            tenant,
            MetricsConfig.load(v),
            LimitsConfig.load(v),
            LogConfig.load(v),
            v.warnings(),
            v.explicitKeys());
    v.requireAllRead();
    return config;
  }

  /** Whether {@code key} was set rather than left at its default. */
  public boolean isExplicit(ConfigKey key) {
    return explicitKeys.contains(key.name());
  }

  /**
   * This configuration with the retained structures' bounds replaced (by {@link RetainedMemory}).
   */
  RelayConfig withRetainedBounds(
      int insightTenants,
      long cachedTenantBytes,
      long familyBytes,
      int ledgerEntries,
      long limitsBytes) {
    InsightConfig i = metrics.insight();
    DeliveryConfig d = delivery;
    LimitsConfig l = limits;
    return new RelayConfig(
        server,
        downstream,
        new DeliveryConfig(
            d.mode(),
            d.queueDir(),
            d.queue(),
            ledgerEntries,
            d.ledgerTtl(),
            d.throttled(),
            d.lanes()),
        new TenantConfig(
            tenant.rules().toBuilder()
                .maxCachedTenantBytes(cachedTenantBytes)
                .maxFamilyBytes(familyBytes)
                .build(),
            tenant.trustIncomingHeader(),
            tenant.tenantHeader(),
            tenant.haLabels()),
        new MetricsConfig(
            metrics.maxTenants(), new InsightConfig(i.enabled(), i.window(), insightTenants)),
        new LimitsConfig(
            l.defaults(), l.window(), l.overridesFile(), l.reloadPeriod(), limitsBytes),
        log,
        warnings,
        explicitKeys);
  }

  /**
   * Environment variables that look like relay keys but match none; callers log them as warnings.
   */
  public static List<String> unknownEnvironmentVariables(Map<String, String> environment) {
    Set<String> known =
        ConfigKeys.ALL.stream().map(ConfigKey::environmentVariable).collect(Collectors.toSet());
    List<String> unknown = new ArrayList<>();
    for (String name : new TreeSet<>(environment.keySet())) {
      if (name.startsWith("RELAY_") && !known.contains(name)) {
        unknown.add(name);
      }
    }
    return unknown;
  }

  /** The text {@code --help} prints: usage and every key with its default and meaning. */
  public static String help() {
    StringBuilder sb = new StringBuilder();
    sb.append(
        "Usage: java -jar prw-relay.jar [--config relay.properties] [--healthcheck] [--demo] [--help]"
            + " [--version]\n\n");
    sb.append(
        "Every key can be set with -Dkey=value, an environment variable (shown below), or the\n");
    sb.append("properties file, in that order of precedence; otherwise the default applies.\n\n");
    for (ConfigKey k : ConfigKeys.ALL) {
      sb.append(k.name())
          .append(" (")
          .append(k.environmentVariable())
          .append(")\n    default: ")
          .append(k.secret() ? "(none)" : k.defaultValue().isEmpty() ? "(empty)" : k.defaultValue())
          .append("\n    ")
          .append(k.meaning())
          .append('\n');
    }
    return sb.toString();
  }

  /** A one-line summary for the startup log; secrets are shown only as set or not. */
  public String describe() {
    return "listen="
        + server.host()
        + ":"
        + server.port()
        + " downstream="
        + redactedUrl()
        + " protocol="
        + downstream.protocol().name().toLowerCase(Locale.ROOT)
        + " tenant-header="
        + downstream.tenantHeader()
        + " tenant-labels="
        + String.join(",", tenant.rules().labels())
        + " missing="
        + tenant.rules().missing().name().toLowerCase(Locale.ROOT)
        + " default-tenant="
        + tenant.rules().defaultTenantId()
        + " auth="
        + downstream.auth().kind()
        + " ingress-auth="
        + server.auth()
        + " ingress-tls="
        + (server.tls().enabled() ? "on" : "off")
        + " delivery="
        + delivery.mode()
        + (delivery.queueDir() == null ? "" : " queue-dir=" + delivery.queueDir());
  }

  private String redactedUrl() {
    URI u = downstream.url();
    return u.getScheme()
        + "://"
        + u.getHost()
        + (u.getPort() < 0 ? "" : ":" + u.getPort())
        + u.getRawPath();
  }
}
