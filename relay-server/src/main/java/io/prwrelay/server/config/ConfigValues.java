package io.prwrelay.server.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The raw value of every key and where it came from, as {@link ConfigSources} resolved them, with
 * typed readers whose errors name the key, the value (unless secret) and its source.
 *
 * <p>The section loaders read each key once; {@link #requireAllRead()} checks that none was
 * forgotten. Not thread-safe: one loader reads it, once, at startup.
 */
final class ConfigValues {
  private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");
  private static final Pattern BYTE_COUNT =
      Pattern.compile("(\\d{1,19})\\s*(B|KiB|MiB|GiB|TiB|kB|KB|MB|GB|TB)?");
  private static final Map<String, Long> BYTE_UNITS =
      Map.of(
          "B", 1L,
          "KiB", 1L << 10,
          "MiB", 1L << 20,
          "GiB", 1L << 30,
          "TiB", 1L << 40,
          "kB", 1_000L,
          "KB", 1_000L,
          "MB", 1_000_000L,
          "GB", 1_000_000_000L,
          "TB", 1_000_000_000_000L);

  private final Map<ConfigKey, String> values;
  private final Map<ConfigKey, String> sources;
  private final Set<ConfigKey> unread;
  private final List<String> warnings = new ArrayList<>();

  /**
   * @param values every key of the catalogue with its value, trimmed
   * @param sources where each value came from, as errors name it ("default", "-Dname", ...)
   */
  ConfigValues(Map<ConfigKey, String> values, Map<ConfigKey, String> sources) {
    this.values = values;
    this.sources = sources;
    this.unread = new LinkedHashSet<>(values.keySet());
  }

  /**
   * @throws IllegalStateException naming the keys of the catalogue that no section read
   */
  void requireAllRead() {
    if (!unread.isEmpty()) {
      throw new IllegalStateException(
          "configuration keys that nothing reads: "
              + unread.stream().map(ConfigKey::name).collect(Collectors.joining(", ")));
    }
  }

  /** The value, trimmed; empty when unset and without default. */
  String string(ConfigKey key) {
    String v = values.get(key);
    if (v == null) {
      throw new IllegalArgumentException(key.name() + " is not in the catalogue");
    }
    unread.remove(key);
    return v;
  }

  /** The value, trimmed, without marking the key read. */
  String peek(ConfigKey key) {
    String v = values.get(key);
    if (v == null) {
      throw new IllegalArgumentException(key.name() + " is not in the catalogue");
    }
    return v;
  }

  /**
   * Notes a setting that does not stop startup but does not do what it says (the value is quoted
   * unless the key is secret); {@link #warnings()} lists them for the startup log.
   */
  void warn(ConfigKey key, String problem) {
    warnings.add(invalid(key, problem).getMessage());
  }

  /** The names of the keys set by a file, a system property or the environment, not defaulted. */
  Set<String> explicitKeys() {
    return values.keySet().stream()
        .filter(k -> !"default".equals(sources.get(k)))
        .map(ConfigKey::name)
        .collect(Collectors.toUnmodifiableSet());
  }

  /** The warnings noted while the sections were read, in order. */
  List<String> warnings() {
    return List.copyOf(warnings);
  }

  /** A problem with {@code key}'s value; the value is quoted unless the key is secret. */
  ConfigException invalid(ConfigKey key, String problem) {
    return ConfigException.invalid(
        key.name(), key.secret() ? null : values.get(key), problem, sources.get(key));
  }

  /**
   * A problem with {@code key}'s value that must not quote it (credentials, control characters).
   */
  ConfigException invalidWithoutValue(ConfigKey key, String problem) {
    return ConfigException.invalid(key.name(), null, problem, sources.get(key));
  }

  /**
   * A problem with one entry of a list value ({@code key}'s value holds several, comma-separated):
   * the entry is quoted rather than the whole value.
   */
  ConfigException invalidEntry(ConfigKey key, String entry, String problem) {
    return ConfigException.invalid(key.name(), entry, problem, sources.get(key));
  }

  /**
   * A comma-separated list of Prometheus label names (blank entries skipped), each checked against
   * {@code [a-zA-Z_][a-zA-Z0-9_]*}: a name that no series can carry would silently match nothing.
   */
  List<String> labelNames(ConfigKey key) throws ConfigException {
    List<String> names = new ArrayList<>();
    for (String entry : string(key).split(",")) {
      String name = entry.trim();
      if (name.isEmpty()) {
        continue;
      }
      if (!LABEL_NAME.matcher(name).matches()) {
        throw invalidEntry(
            key,
            name,
            "is not a valid Prometheus label name (letters, digits and _, not starting with a"
                + " digit: [a-zA-Z_][a-zA-Z0-9_]*)");
      }
      names.add(name);
    }
    return names;
  }

  int integer(ConfigKey key, int min, int max) throws ConfigException {
    long v;
    try {
      v = Long.parseLong(string(key));
    } catch (NumberFormatException e) {
      throw invalid(key, "is not a whole number");
    }
    if (v < min || v > max) {
      throw invalid(key, "must be between " + min + " and " + max);
    }
    return (int) v;
  }

  /**
   * A byte count: a whole number, optionally followed (with or without a space) by a unit: {@code
   * B}; {@code KiB}, {@code MiB}, {@code GiB}, {@code TiB} (powers of 1024); or {@code kB}/{@code
   * KB}, {@code MB}, {@code GB}, {@code TB} (powers of 1000, as the SI and Kubernetes use them).
   */
  long bytes(ConfigKey key, long min, long max) throws ConfigException {
    Matcher m = BYTE_COUNT.matcher(string(key));
    long v;
    try {
      if (!m.matches()) {
        throw new NumberFormatException();
      }
      long unit = m.group(2) == null ? 1 : BYTE_UNITS.get(m.group(2));
      v = Math.multiplyExact(Long.parseLong(m.group(1)), unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw invalid(
          key,
          "is not a byte count like 1048576, 512KiB, 64MiB or 8GiB (KiB, MiB, GiB are powers of"
              + " 1024; KB, MB, GB powers of 1000)");
    }
    if (v < min || v > max) {
      throw invalid(key, "must be between " + min + " and " + max + " bytes");
    }
    return v;
  }

  boolean bool(ConfigKey key) throws ConfigException {
    String s = string(key).toLowerCase(Locale.ROOT);
    if (s.equals("true")) {
      return true;
    }
    if (s.equals("false")) {
      return false;
    }
    throw invalid(key, "must be true or false");
  }

  /** A positive duration in the syntax of {@link Durations}. */
  Duration duration(ConfigKey key) throws ConfigException {
    Duration d = parsedDuration(key);
    if (d.isZero()) {
      throw invalid(key, "must be greater than zero");
    }
    return d;
  }

  /** A duration in the syntax of {@link Durations}, {@code 0} allowed. */
  Duration durationOrZero(ConfigKey key) throws ConfigException {
    return string(key).equals("0") ? Duration.ZERO : parsedDuration(key);
  }

  private Duration parsedDuration(ConfigKey key) throws ConfigException {
    try {
      return Durations.parse(string(key));
    } catch (IllegalArgumentException e) {
      throw invalid(key, e.getMessage());
    }
  }

  <E extends Enum<E>> E choice(ConfigKey key, Class<E> type) throws ConfigException {
    String s = string(key);
    for (E e : type.getEnumConstants()) {
      // The documented spelling of DROP_OLDEST is drop-oldest.
      if (e.name().equalsIgnoreCase(s) || e.name().replace('_', '-').equalsIgnoreCase(s)) {
        return e;
      }
    }
    throw invalid(
        key,
        "must be one of "
            + Arrays.stream(type.getEnumConstants())
                .map(e -> e.name().toLowerCase(Locale.ROOT).replace('_', '-'))
                .collect(Collectors.joining(", ")));
  }

  /**
   * An http(s) URL naming a host, without credentials; {@code {tenant}} may appear in its path or
   * query and is kept as {@code %7Btenant%7D}.
   */
  URI url(ConfigKey key) throws ConfigException {
    String text = string(key);
    URI u;
    try {
      u = new URI(text.replace("{tenant}", "TENANT_PLACEHOLDER"));
    } catch (URISyntaxException e) {
      throw invalid(key, "is not a URL (" + e.getReason() + ")");
    }
    String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw invalid(key, "must start with http:// or https://");
    }
    if (u.getHost() == null || u.getHost().contains("TENANT_PLACEHOLDER")) {
      throw invalid(key, "must name a host (and {tenant} may appear only in the path or query)");
    }
    if (u.getRawUserInfo() != null) {
      throw invalidWithoutValue(
          key,
          "must not carry credentials; use "
              + DownstreamConfig.BASIC_AUTH_USERNAME.name()
              + " and "
              + DownstreamConfig.BASIC_AUTH_PASSWORD.name());
    }
    try {
      return new URI(text.replace("{tenant}", "%7Btenant%7D"));
    } catch (URISyntaxException e) {
      throw invalid(key, "is not a URL (" + e.getReason() + ")");
    }
  }
}
