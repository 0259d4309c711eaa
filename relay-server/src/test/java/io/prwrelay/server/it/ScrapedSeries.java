package io.prwrelay.server.it;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Successive scrapes of a relay's {@code /metrics} page turned into the {@code input_series} of a
 * promtool rule unit test: scrape {@code i} becomes the sample at {@code i × interval}, every
 * series gets the {@code job} and {@code instance} labels a Prometheus scrape would add, a series
 * missing from a scrape is {@code _} there, and {@code up} is 1 at every scrape. The series are the
 * relay's own, as it exported them; only time is compressed (a scrape stands for one interval).
 */
final class ScrapedSeries {
  /** A sample line of the Prometheus text format: name, optional label set, value. */
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})?\\s+(\\S+)\\s*$");

  private final String job;
  private final String instance;

  /** Values of each series (name and labels as promtool reads them), one per scrape. */
  private final Map<String, List<String>> series = new LinkedHashMap<>();

  private int scrapes;

  ScrapedSeries(String job, String instance) {
    this.job = job;
    this.instance = instance;
  }

  /** Adds one scrape of the relay (Prometheus text format). */
  void add(String text) {
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher m = SAMPLE.matcher(line);
      if (!m.matches()) {
        throw new IllegalArgumentException("not a sample line: " + line);
      }
      String labels = m.group(2) == null || m.group(2).isEmpty() ? "" : m.group(2) + ",";
      String key = m.group(1) + "{" + labels + "instance=\"" + instance + "\",job=\"" + job + "\"}";
      put(key, m.group(3));
    }
    put("up{instance=\"" + instance + "\",job=\"" + job + "\"}", "1");
    scrapes++;
  }

  private void put(String key, String value) {
    List<String> values = series.computeIfAbsent(key, k -> new ArrayList<>());
    while (values.size() < scrapes) {
      values.add("_");
    }
    values.add(value);
  }

  /** Scrapes added. */
  int scrapes() {
    return scrapes;
  }

  /** The scraped series whose text (name and labels) contains {@code part}, with their values. */
  Map<String, List<String>> matching(String part) {
    Map<String, List<String>> found = new LinkedHashMap<>();
    series.forEach(
        (k, v) -> {
          if (k.contains(part)) {
            found.put(k, v);
          }
        });
    return found;
  }

  /** The {@code input_series} list of a promtool test group, indented for it. */
  String inputSeriesYaml(String indent) {
    StringBuilder sb = new StringBuilder();
    series.forEach(
        (key, values) -> {
          StringBuilder v = new StringBuilder();
          for (int i = 0; i < scrapes; i++) {
            v.append(i == 0 ? "" : " ").append(i < values.size() ? values.get(i) : "_");
          }
          // A single-quoted YAML scalar writes a quote as two (the JVM names a buffer pool
          // "mapped - 'non-volatile memory'").
          sb.append(indent)
              .append("- series: '")
              .append(key.replace("'", "''"))
              .append("'\n")
              .append(indent)
              .append("  values: '")
              .append(v)
              .append("'\n");
        });
    return sb.toString();
  }
}
