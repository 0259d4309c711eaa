package io.prwrelay.bench.load;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Stop-the-world pauses read from a unified JVM GC log ({@code -Xlog:gc*:file=...}): every line
 * reporting {@code GC(n) Pause ... <time>ms}. That covers G1 (young, mixed, remark, cleanup, full),
 * Parallel, Serial, ZGC and Shenandoah; the {@code gc,start} lines of G1, which carry no time, are
 * not counted twice.
 *
 * @param count pauses
 * @param totalMillis their sum
 * @param maxMillis the longest
 */
public record GcPauses(long count, double totalMillis, double maxMillis) {
  private static final Pattern PAUSE =
      Pattern.compile("\\bGC\\(\\d+\\) Pause .* (\\d+(?:\\.\\d+)?)ms\\s*$");

  /** Reads a GC log; a missing file yields no pauses. */
  public static GcPauses parse(Path log) {
    if (!Files.exists(log)) {
      return new GcPauses(0, 0, 0);
    }
    try (Stream<String> lines = Files.lines(log, StandardCharsets.UTF_8)) {
      return parse(lines);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read GC log " + log, e);
    }
  }

  /** Sums the pause lines among {@code lines}. */
  public static GcPauses parse(Stream<String> lines) {
    long count = 0;
    double total = 0;
    double max = 0;
    for (String line : (Iterable<String>) lines::iterator) {
      Matcher m = PAUSE.matcher(line);
      if (m.find()) {
        double ms = Double.parseDouble(m.group(1));
        count++;
        total += ms;
        max = Math.max(max, ms);
      }
    }
    return new GcPauses(count, total, max);
  }
}
