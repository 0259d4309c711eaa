package io.prwrelay.server.config;

import java.util.Optional;

/**
 * A configuration problem that stops startup: the key, the value as given (never a secret's), what
 * is wrong with it, and where the value came from. {@link #getMessage()} puts them on one line,
 * e.g. {@code relay.server.port 'http' is not a whole number (from -Drelay.server.port)}.
 */
public final class ConfigException extends Exception {
  private static final long serialVersionUID = 1L;

  private final String key;
  private final String value;
  private final String problem;
  private final String source;

  private ConfigException(String message, String key, String value, String problem, String source) {
    super(message);
    this.key = key;
    this.value = value;
    this.problem = problem;
    this.source = source;
  }

  /**
   * A value that does not parse or breaks a rule.
   *
   * @param value the value to quote, or {@code null} to leave it out (secrets)
   * @param problem what is wrong, phrased to follow the key and value ("must be between 0 and 9")
   * @param source where the value came from ({@code -Dkey}, an environment variable, the file, or
   *     {@code default}), or {@code null} when unknown
   */
  static ConfigException invalid(String key, String value, String problem, String source) {
    String message =
        key
            + (value == null ? "" : " '" + value + "'")
            + " "
            + problem
            + (source == null ? "" : " (from " + source + ")");
    return new ConfigException(message, key, value, problem, source);
  }

  /**
   * A key no part of the relay reads.
   *
   * @param where how it was given: "in relay.properties", "as a -D system property"
   * @param similar the known key it most resembles, or {@code null}
   */
  static ConfigException replacedKey(String key, String where, String replacement) {
    return new ConfigException(
        "key " + key + " " + where + " no longer exists; it was replaced by " + replacement,
        key,
        null,
        "was replaced by " + replacement,
        where);
  }

  static ConfigException unknownKey(String key, String where, String similar) {
    String suggestion = similar == null ? "" : "; did you mean " + similar + "?";
    return new ConfigException(
        "unknown key " + key + " " + where + suggestion + " (see --help for every key)",
        key,
        null,
        "is not a relay key" + suggestion,
        where);
  }

  /** The {@code --config} file cannot be read. */
  static ConfigException unreadableFile(String file, String reason) {
    String problem = "cannot read (" + reason + ")";
    return new ConfigException(
        "--config " + file + ": " + problem, "--config", file, problem, null);
  }

  /**
   * The {@code --config} file is YAML (for example cortex-tenant's), not Java properties.
   *
   * @param line the number (from 1) of the first line that gave it away
   * @param text that line
   */
  static ConfigException yamlFile(String file, int line, String text) {
    String problem =
        "looks like YAML (line "
            + line
            + ": '"
            + text.strip()
            + "'); the file must be Java properties, one key=value per line (relay.server.port=8080)."
            + " The table 'Migrating from cortex-tenant' (docs/migrating-from-cortex-tenant.md) names"
            + " the relay key for each cortex-tenant setting";
    return new ConfigException("--config " + file + " " + problem, "--config", file, problem, null);
  }

  /** The key the problem is about ({@code --config} for an unreadable file). */
  public String key() {
    return key;
  }

  /** The offending value; empty for secrets and for problems that are not about one value. */
  public Optional<String> value() {
    return Optional.ofNullable(value);
  }

  /** What is wrong, without the key and value. */
  public String problem() {
    return problem;
  }

  /** Where the value came from, when known. */
  public Optional<String> source() {
    return Optional.ofNullable(source);
  }
}
