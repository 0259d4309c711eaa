package io.prwrelay.server.lanes;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Values read from the relay's {@code /metrics} page (Prometheus text format). */
public final class MetricsText {
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})?\\s+(\\S+)", Pattern.MULTILINE);

  private MetricsText() {}

  /**
   * The sum of the samples of metric {@code name} that carry every label of {@code labels}; 0 when
   * there is none (a counter not incremented yet is not exported).
   */
  public static double value(String text, String name, Map<String, String> labels) {
    double sum = 0;
    Matcher m = SAMPLE.matcher(text);
    while (m.find()) {
      if (!m.group(1).equals(name)) {
        continue;
      }
      String all = m.group(3) == null ? "" : m.group(3);
      boolean matches = true;
      for (Map.Entry<String, String> l : labels.entrySet()) {
        if (!all.contains(l.getKey() + "=\"" + l.getValue() + "\"")) {
          matches = false;
          break;
        }
      }
      if (matches) {
        sum += Double.parseDouble(m.group(4));
      }
    }
    return sum;
  }
}
