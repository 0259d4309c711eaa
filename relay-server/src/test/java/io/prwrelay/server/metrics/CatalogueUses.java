package io.prwrelay.server.metrics;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks text that queries the relay's metrics (alert rules, dashboard JSON, PromQL) against {@link
 * MetricCatalogue}: every {@code relay_*} name must be a metric of the catalogue (or a series of
 * one of its histograms), and every label it is selected on ({@code {kind!="throttled"}}), grouped
 * by ({@code sum by (tenant, kind) (...)}) or read from ({@code label_values(..., tenant)}) must be
 * one of that metric's tags, the target labels {@code job} and {@code instance} added by the
 * scrape, or {@code le} of a histogram's buckets.
 */
final class CatalogueUses {
  private static final Set<String> TARGET_LABELS = Set.of("job", "instance");
  private static final Pattern NAME = Pattern.compile("(?<![a-zA-Z0-9_:])relay_[a-z_]+");
  private static final Pattern MATCHER =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"");
  private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without)\\s*\\(([^)]*)\\)");
  private static final Pattern LABEL_VALUES =
      Pattern.compile("label_values\\(\\s*(relay_[a-z_]+)[^,]*,\\s*([a-zA-Z_]+)\\s*\\)");

  /** A {@code relay_*} series name resolved to its catalogue entry. */
  private record Use(String series, Metric metric, boolean bucket) {
    boolean has(String label) {
      return metric.tags().contains(label)
          || TARGET_LABELS.contains(label)
          || (bucket && label.equals("le"));
    }
  }

  private final List<String> problems = new ArrayList<>();
  private int uses;

  /**
   * Checks {@code text} ({@code where} names it in problems). Quotes escaped as in JSON or YAML
   * strings ({@code \"}) count as quotes.
   */
  CatalogueUses check(String where, String text) {
    String t = text.replace("\\\"", "\"");
    Matcher m = NAME.matcher(t);
    while (m.find()) {
      uses++;
      Use use = resolve(m.group());
      if (use == null) {
        problems.add(where + ": " + m.group() + " is not in the catalogue");
      } else if (m.end() < t.length() && t.charAt(m.end()) == '{') {
        String selector = t.substring(m.end(), t.indexOf('}', m.end()));
        Matcher label = MATCHER.matcher(selector);
        while (label.find()) {
          requireLabel(where, use, label.group(1));
        }
      }
    }
    Matcher g = GROUPING.matcher(t);
    while (g.find()) {
      String scope = groupedExpression(t, g.start(), g.end());
      for (String label : g.group(1).split(",")) {
        if (!label.isBlank()) {
          Matcher inner = NAME.matcher(scope);
          while (inner.find()) {
            Use use = resolve(inner.group());
            if (use != null) {
              requireLabel(where, use, label.trim());
            }
          }
        }
      }
    }
    Matcher v = LABEL_VALUES.matcher(t);
    while (v.find()) {
      Use use = resolve(v.group(1));
      if (use != null) {
        requireLabel(where, use, v.group(2));
      }
    }
    return this;
  }

  /** What the checked texts use that the catalogue does not have. */
  List<String> problems() {
    return problems;
  }

  /** How many {@code relay_*} names the checked texts use. */
  int uses() {
    return uses;
  }

  /** The catalogue entry exporting {@code series}: a family, or a histogram's series. */
  static Metric metricOf(String series) {
    Use use = resolve(series);
    return use == null ? null : use.metric();
  }

  private static Use resolve(String series) {
    for (Metric metric : MetricCatalogue.ALL) {
      if (metric.exportedFamilies().contains(series)) {
        return new Use(series, metric, false);
      }
      if (metric.type() == Metric.Type.HISTOGRAM) {
        for (String part : List.of("_bucket", "_count", "_sum")) {
          if (series.equals(metric.exportedName() + part)) {
            return new Use(series, metric, part.equals("_bucket"));
          }
        }
      }
    }
    return null;
  }

  private void requireLabel(String where, Use use, String label) {
    if (!use.has(label)) {
      problems.add(
          where
              + ": "
              + use.series()
              + " is used with the label "
              + label
              + ", but its tags are "
              + new TreeSet<>(use.metric().tags()));
    }
  }

  /**
   * The expression a {@code by (...)} clause between {@code start} and {@code end} groups: the
   * parenthesised one after it ({@code sum by (x) (expr)}) or before it ({@code sum(expr) by (x)}).
   */
  private static String groupedExpression(String t, int start, int end) {
    int after = skipSpaces(t, end);
    if (after < t.length() && t.charAt(after) == '(') {
      return t.substring(after, closing(t, after));
    }
    int before = start - 1;
    while (before >= 0 && Character.isWhitespace(t.charAt(before))) {
      before--;
    }
    if (before >= 0 && t.charAt(before) == ')') {
      int depth = 0;
      for (int i = before; i >= 0; i--) {
        char c = t.charAt(i);
        depth += c == ')' ? 1 : c == '(' ? -1 : 0;
        if (depth == 0) {
          return t.substring(i, before + 1);
        }
      }
    }
    return "";
  }

  private static int skipSpaces(String t, int i) {
    while (i < t.length() && Character.isWhitespace(t.charAt(i))) {
      i++;
    }
    return i;
  }

  /** The index after the parenthesis closing the one at {@code open}. */
  private static int closing(String t, int open) {
    int depth = 0;
    for (int i = open; i < t.length(); i++) {
      char c = t.charAt(i);
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (depth == 0) {
        return i + 1;
      }
    }
    return t.length();
  }
}
