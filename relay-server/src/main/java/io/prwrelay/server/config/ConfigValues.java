package io.prwrelay.server.config;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The raw value of every key and where it came from, resolved once by precedence ({@code -D},
 * environment, file, default), with typed readers whose errors name the key, the value (unless
 * secret) and its source.
 *
 * <p>Resolution consumes, from the file's keys and the {@code relay.*} system properties, every key
 * of the catalogue; whatever is left over is an unknown key and stops startup, reported before any
 * value is checked (a misspelt key explains the problems it causes). The section loaders then read
 * each key once; {@link #requireAllRead()} checks that none was forgotten.
 */
final class ConfigValues {
  /** A YAML mapping line: {@code key: value}, {@code key:}, {@code - key: value}; no dot in key. */
  private static final Pattern YAML_KEY =
      Pattern.compile("\\s*(- )?[A-Za-z_][A-Za-z0-9_-]*:(\\s.*)?");

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

  private ConfigValues(Map<ConfigKey, String> values, Map<ConfigKey, String> sources) {
    this.values = values;
    this.sources = sources;
    this.unread = new LinkedHashSet<>(values.keySet());
  }

  /**
   * Resolves every key of {@code keys}.
   *
   * @param file properties file, or {@code null}
   * @param systemProperties {@code -D} values; only {@code relay.*} names are looked at
   * @param environment environment variables; only those of known keys are looked at
   * @throws ConfigException when the file cannot be read or holds (or {@code -D} sets) an unknown
   *     {@code relay.*} key
   */
  static ConfigValues resolve(
      List<ConfigKey> keys,
      Path file,
      Map<String, String> systemProperties,
      Map<String, String> environment)
      throws ConfigException {
    Map<String, String> fromFile = file == null ? Map.of() : read(file);
    Set<String> fileLeft = new LinkedHashSet<>(fromFile.keySet());
    Set<String> propertiesLeft = new LinkedHashSet<>();
    for (String name : systemProperties.keySet()) {
      if (name.startsWith("relay.")) {
        propertiesLeft.add(name);
      }
    }
    Map<ConfigKey, String> values = new LinkedHashMap<>();
    Map<ConfigKey, String> sources = new HashMap<>();
    for (ConfigKey k : keys) {
      fileLeft.remove(k.name());
      propertiesLeft.remove(k.name());
      String value;
      String source;
      if (systemProperties.containsKey(k.name())) {
        value = systemProperties.get(k.name());
        source = "-D" + k.name();
      } else if (environment.containsKey(k.environmentVariable())) {
        value = environment.get(k.environmentVariable());
        source = "environment variable " + k.environmentVariable();
      } else if (fromFile.containsKey(k.name())) {
        value = fromFile.get(k.name());
        source = file.toString();
      } else {
        value = k.defaultValue();
        source = "default";
      }
      values.put(k, value.trim());
      sources.put(k, source);
    }
    if (!fileLeft.isEmpty()) {
      String name = fileLeft.iterator().next();
      throw unknown(name, "in " + file, keys);
    }
    if (!propertiesLeft.isEmpty()) {
      String name = propertiesLeft.iterator().next();
      throw unknown(name, "as a -D system property", keys);
    }
    return new ConfigValues(values, sources);
  }

  private static Map<String, String> read(Path file) throws ConfigException {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw ConfigException.unreadableFile(file.toString(), e.getMessage());
    }
    rejectYaml(file, text);
    Properties p = new Properties();
    try (Reader r = new StringReader(text)) {
      p.load(r);
    } catch (IOException | IllegalArgumentException e) {
      throw ConfigException.unreadableFile(file.toString(), e.getMessage());
    }
    Map<String, String> m = new LinkedHashMap<>();
    for (String name : p.stringPropertyNames()) {
      m.put(name, p.getProperty(name));
    }
    return m;
  }

  /**
   * Stops at a YAML file (cortex-tenant's configuration is one): a {@code ---} line, or a {@code
   * key: value} or {@code key:} line whose key has no dot. Java properties accept {@code key:
   * value} too, but every relay key has dots, so such a line would only end as an "unknown key"
   * that does not say what is wrong.
   */
  private static void rejectYaml(Path file, String text) throws ConfigException {
    String[] lines = text.split("\\R");
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i];
      String trimmed = line.strip();
      if (trimmed.equals("---") || YAML_KEY.matcher(line).matches()) {
        throw ConfigException.yamlFile(file.toString(), i + 1, line);
      }
    }
  }

  private static ConfigException unknown(String name, String where, List<ConfigKey> keys) {
    String replacement = ConfigKeys.REPLACED.get(name);
    return replacement != null
        ? ConfigException.replacedKey(name, where, replacement)
        : ConfigException.unknownKey(name, where, similar(name, keys));
  }

  /** The known key within three edits of {@code name}, or null. */
  private static String similar(String name, List<ConfigKey> keys) {
    String best = null;
    int bestDistance = 4;
    for (ConfigKey k : keys) {
      int d = distance(name, k.name());
      if (d < bestDistance) {
        bestDistance = d;
        best = k.name();
      }
    }
    return best;
  }

  /** Levenshtein distance. */
  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
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
      if (e.name().equalsIgnoreCase(s)) {
        return e;
      }
    }
    throw invalid(
        key,
        "must be one of "
            + Arrays.stream(type.getEnumConstants())
                .map(e -> e.name().toLowerCase(Locale.ROOT))
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
              + ConfigKeys.BASIC_AUTH_USERNAME.name()
              + " and "
              + ConfigKeys.BASIC_AUTH_PASSWORD.name());
    }
    try {
      return new URI(text.replace("{tenant}", "%7Btenant%7D"));
    } catch (URISyntaxException e) {
      throw invalid(key, "is not a URL (" + e.getReason() + ")");
    }
  }
}
