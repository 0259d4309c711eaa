package io.prwrelay.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Dependencies between the relay's packages run one way: entry points → composition root → ingress
 * (the HTTP/1.1 edge) → write (the write pipeline) → metrics and insight → lane and limits → queue
 * and downstream → config, transport and protocol (the Remote Write versions and headers every
 * layer speaks). A class may use its own package and any package below it, never one above.
 */
class PackageLayersTest {
  private static final String ROOT = "io.prwrelay.server";

  /** Each package's layer; a package may use only packages of a lower layer. */
  private static final Map<String, Integer> LAYERS =
      Map.ofEntries(
          Map.entry("", 9),
          Map.entry("demo", 8),
          Map.entry("app", 7),
          Map.entry("ingress", 6),
          Map.entry("write", 5),
          Map.entry("metrics", 4),
          Map.entry("insight", 4),
          Map.entry("lane", 3),
          Map.entry("limits", 3),
          Map.entry("queue", 2),
          Map.entry("downstream", 2),
          Map.entry("config", 1),
          Map.entry("transport", 1),
          Map.entry("protocol", 1));

  private static final Pattern REFERENCE =
      Pattern.compile("\\bio\\.prwrelay\\.server(?:\\.([a-z]+))?\\.[A-Z]");

  @Test
  void noPackageUsesAPackageAboveIt() throws Exception {
    Path sources = Path.of("src", "main", "java", "io", "prwrelay", "server");
    List<String> violations = new ArrayList<>();
    TreeSet<String> seen = new TreeSet<>();
    try (Stream<Path> files = Files.walk(sources)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        Path dir = sources.relativize(file.getParent());
        String from = dir.toString().replace('/', '.');
        assertTrue(LAYERS.containsKey(from), "package without a layer: " + from);
        seen.add(from);
        for (String line : Files.readAllLines(file)) {
          String code = line.strip();
          if (code.startsWith("*") || code.startsWith("/*") || code.startsWith("//")) {
            continue;
          }
          Matcher m = REFERENCE.matcher(code);
          while (m.find()) {
            String to = m.group(1) == null ? "" : m.group(1);
            if (!to.equals(from) && LAYERS.get(to) >= LAYERS.get(from)) {
              violations.add(file.getFileName() + ": " + name(from) + " -> " + name(to));
            }
          }
        }
      }
    }
    assertEquals(new TreeSet<>(LAYERS.keySet()), seen, "every layer has classes");
    assertEquals(List.of(), violations);
  }

  private static String name(String sub) {
    return sub.isEmpty() ? ROOT : ROOT + "." + sub;
  }
}
