package io.prwrelay.bench.svg;

import java.util.Locale;

/** Small helpers shared by the SVG writers: text escaping and locale-independent numbers. */
final class Svg {
  private Svg() {}

  /** {@code text} safe inside an SVG element or a double-quoted attribute. */
  static String escape(String text) {
    StringBuilder sb = new StringBuilder(text.length() + 16);
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '&' -> sb.append("&amp;");
        case '<' -> sb.append("&lt;");
        case '>' -> sb.append("&gt;");
        case '"' -> sb.append("&quot;");
        case '\'' -> sb.append("&#39;");
        default -> {
          // XML 1.0 allows no control characters but tab, newline and carriage return.
          if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
            sb.append('?');
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.toString();
  }

  /** A coordinate with two decimals, the same on every machine. */
  static String num(double v) {
    return String.format(Locale.ROOT, "%.2f", v);
  }
}
