package io.prwrelay.server.config;

import java.util.Locale;

/**
 * One configuration key: its name, default, meaning, and whether its value is a secret (never
 * logged, never echoed in an error). Every key is declared once, as a constant of the section that
 * loads it ({@link ServerConfig#PORT}), and listed in {@link ConfigKeys#ALL}, which {@code --help}
 * and docs/configuration.md follow.
 */
public record ConfigKey(String name, String defaultValue, String meaning, boolean secret) {
  static ConfigKey key(String name, String defaultValue, String meaning) {
    return new ConfigKey(name, defaultValue, meaning, false);
  }

  static ConfigKey secret(String name, String meaning) {
    return new ConfigKey(name, "", meaning, true);
  }

  /**
   * The key set to {@code value}, as messages quote a limit in effect: {@code
   * relay.server.read-timeout=PT30S}. Not for a {@link #secret} key.
   */
  public String setTo(Object value) {
    return name + "=" + value;
  }

  /**
   * The environment variable that sets this key: {@code relay.downstream.url} → {@code
   * RELAY_DOWNSTREAM_URL}.
   */
  public String environmentVariable() {
    return name.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }
}
