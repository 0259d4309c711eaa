package io.prwrelay.server.config;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one duration syntax of the relay's keys and tools: a whole number followed by {@code ms},
 * {@code s}, {@code m} or {@code h} ({@code 500ms}, {@code 10s}, {@code 5m}, {@code 1h}).
 */
public final class Durations {
  private static final Pattern DURATION = Pattern.compile("(\\d{1,12})(ms|s|m|h)");

  /** How a problem with a duration is described: "is not a duration like 500ms, 10s, 5m or 1h". */
  public static final String EXPECTED = "is not a duration like 500ms, 10s, 5m or 1h";

  private Durations() {}

  /**
   * Parses {@code text} (surrounding white space ignored).
   *
   * @throws IllegalArgumentException with {@link #EXPECTED} as its message when it does not parse
   */
  public static Duration parse(String text) {
    Matcher m = DURATION.matcher(text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(EXPECTED);
    }
    long n = Long.parseLong(m.group(1));
    switch (m.group(2)) {
      case "ms":
        return Duration.ofMillis(n);
      case "s":
        return Duration.ofSeconds(n);
      case "m":
        return Duration.ofMinutes(n);
      default:
        return Duration.ofHours(n);
    }
  }
}
