/**
 * The configuration: every key declared once in {@link io.prwrelay.server.config.ConfigKeys} (name,
 * default, meaning, secret or not; grouped in the {@code *Keys} classes, checked against the table
 * in docs/configuration.md by {@code ConfigurationDocTest}), resolved by precedence ({@code -D},
 * environment, file, default) in {@link io.prwrelay.server.config.ConfigSources}, and loaded once
 * at startup into the immutable {@link io.prwrelay.server.config.RelayConfig}: one typed section
 * per component ({@code ServerConfig}, {@code TenantConfig}, {@code DeliveryConfig}, {@code
 * DownstreamConfig}, ...), each handed only to its component. A bad value stops startup with a
 * {@link io.prwrelay.server.config.ConfigException} naming the key and never echoing a secret.
 */
package io.prwrelay.server.config;
