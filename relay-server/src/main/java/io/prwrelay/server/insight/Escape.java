package io.prwrelay.server.insight;

/**
 * Escaping of text for the two contexts the tenant pages write it into. Tenant IDs may hold {@code
 * '}, {@code (}, {@code )}, {@code *} and {@code !}, metric names and downstream messages anything.
 */
final class Escape {
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private Escape() {}

  /** {@code s} safe as HTML text and inside a quoted attribute value (either quote). */
  static String html(String s) {
    StringBuilder b = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      String r =
          switch (c) {
            case '&' -> "&amp;";
            case '<' -> "&lt;";
            case '>' -> "&gt;";
            case '"' -> "&quot;";
            case '\'' -> "&#39;";
            default -> null;
          };
      if (r != null && b == null) {
        b = new StringBuilder(s.length() + 16).append(s, 0, i);
      }
      if (b != null) {
        if (r != null) {
          b.append(r);
        } else {
          b.append(c);
        }
      }
    }
    return b == null ? s : b.toString();
  }

  /**
   * {@code s} as a JSON string literal, quotes included: {@code "} and {@code \} escaped, control
   * characters as {@code \}{@code uXXXX}, and {@code <}, {@code >}, {@code &} and {@code '} too, so
   * that the text stays inert even if embedded in HTML.
   */
  static String json(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20
              || c == '<'
              || c == '>'
              || c == '&'
              || c == '\''
              || c == 0x2028
              || c == 0x2029) {
            b.append("\\u")
                .append(HEX[c >>> 12])
                .append(HEX[(c >>> 8) & 0xF])
                .append(HEX[(c >>> 4) & 0xF])
                .append(HEX[c & 0xF]);
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
