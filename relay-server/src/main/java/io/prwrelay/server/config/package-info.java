/**
 * The configuration: every key (name, default, meaning, secret or not) declared once, as a constant
 * of the section that loads it ({@code ServerConfig.PORT}, {@code DeliveryConfig.QUEUE_DIR}), and
 * listed in the catalogue {@link io.prwrelay.server.config.ConfigKeys#ALL} (checked against the
 * table in docs/configuration.md by {@code ConfigurationDocTest}), resolved by precedence ({@code
 * -D}, environment, file, default) in {@link io.prwrelay.server.config.ConfigSources}, and loaded
 * once at startup into the immutable {@link io.prwrelay.server.config.RelayConfig}: one typed
 * section per component ({@code ServerConfig}, {@code TenantConfig}, {@code DeliveryConfig}, {@code
 * DownstreamConfig}, ...), each handed only to its component. A bad value stops startup with a
 * {@link io.prwrelay.server.config.ConfigException} naming the key and never echoing a secret.
 *
 * <p>Where the keys live: {@code ServerConfig} ({@code relay.server.*} but inbound auth and TLS),
 * {@code InboundAuthConfig} ({@code relay.server.basic-auth.*}, {@code relay.server.bearer-token*},
 * {@code relay.server.auth.*}), {@code IngressTlsConfig} ({@code relay.server.tls.*}), {@code
 * DownstreamConfig} ({@code relay.downstream.*}), {@code DeliveryConfig} ({@code relay.delivery.*}
 * and {@code relay.lanes.*}, whose settings it builds), {@code TenantConfig} ({@code
 * relay.tenant.*} and {@code relay.metadata*}), {@code LimitsConfig} ({@code relay.limits.*}),
 * {@code MetricsConfig} ({@code relay.metrics.*}), {@code InsightConfig} ({@code relay.insight.*})
 * and {@code LogConfig} ({@code relay.log.*}). Each loader reads its own keys, but for {@code
 * relay.metrics.count-samples}, which {@code TenantConfig} reads because it decides how far the
 * router reads a series.
 */
package io.prwrelay.server.config;
