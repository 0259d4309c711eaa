package io.prwrelay.server.testing;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Values read from a scrape of the relay's {@code /metrics} (Prometheus text format): the one way
 * the tests read a metric. A metric the scrape does not have fails the test, naming it, unless the
 * caller gives the value that stands for its absence ({@code ...Or}: a counter not incremented yet
 * is not exported).
 */
public final class Scrape {
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})?\\s+(\\S+)", Pattern.MULTILINE);

  private Scrape() {}

  /**
   * The value of the sample written exactly as {@code series}: a name, or a name and its labels as
   * the exposition writes them ({@code relay_requests_total{status="204"}}).
   *
   * @throws AssertionError when the scrape has no such sample
   */
  public static double value(String scrape, String series) {
    Double v = find(scrape, series);
    if (v == null) {
      throw new AssertionError("no " + series + " in the scrape:\n" + scrape);
    }
    return v;
  }

  /** {@link #value(String, String)}, or {@code otherwise} when the scrape has no such sample. */
  public static double valueOr(String scrape, String series, double otherwise) {
    Double v = find(scrape, series);
    return v == null ? otherwise : v;
  }

  /**
   * The sum of the samples of metric {@code name} that carry every label of {@code labels} (and any
   * others).
   *
   * @throws AssertionError when no sample matches
   */
  public static double sum(String scrape, String name, Map<String, String> labels) {
    double sum = 0;
    boolean any = false;
    Matcher m = SAMPLE.matcher(scrape);
    while (m.find()) {
      if (m.group(1).equals(name) && carries(m.group(3), labels)) {
        sum += Double.parseDouble(m.group(4));
        any = true;
      }
    }
    if (!any) {
      throw new AssertionError("no " + name + " with " + labels + " in the scrape:\n" + scrape);
    }
    return sum;
  }

  /** {@link #sum}, or {@code otherwise} when no sample matches. */
  public static double sumOr(
      String scrape, String name, Map<String, String> labels, double otherwise) {
    try {
      return sum(scrape, name, labels);
    } catch (AssertionError none) {
      return otherwise;
    }
  }

  private static boolean carries(String written, Map<String, String> labels) {
    String all = written == null ? "" : written;
    for (Map.Entry<String, String> l : labels.entrySet()) {
      if (!all.contains(l.getKey() + "=\"" + l.getValue() + "\"")) {
        return false;
      }
    }
    return true;
  }

  private static Double find(String scrape, String series) {
    for (String line : scrape.split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim());
      }
    }
    return null;
  }
}
