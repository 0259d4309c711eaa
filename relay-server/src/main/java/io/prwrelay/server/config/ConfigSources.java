package io.prwrelay.server.config;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Where the value of each key comes from: resolved once by precedence ({@code -D}, environment,
 * file, default) into the {@link ConfigValues} the section loaders read.
 *
 * <p>Resolution consumes, from the file's keys and the {@code relay.*} system properties, every key
 * of the catalogue; whatever is left over is an unknown key and stops startup, reported before any
 * value is checked (a misspelt key explains the problems it causes): with what replaced it when it
 * is in {@link ConfigKeys#REPLACED}, else with the known key within three edits, if any. A file
 * that looks like YAML is refused before it is parsed as properties.
 */
final class ConfigSources {
  /** A YAML mapping line: {@code key: value}, {@code key:}, {@code - key: value}; no dot in key. */
  private static final Pattern YAML_KEY =
      Pattern.compile("\\s*(- )?[A-Za-z_][A-Za-z0-9_-]*:(\\s.*)?");

  private ConfigSources() {}

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
}
