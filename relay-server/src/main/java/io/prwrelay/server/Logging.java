package io.prwrelay.server;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * One-line log format for java.util.logging, unless the user configured logging: the time in UTC
 * (ISO 8601 with milliseconds and {@code Z}), the level, the logger and the message.
 */
final class Logging {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  /** The handler {@link #configure()} installed, or null when the user configured logging. */
  private static Handler console;

  private Logging() {}

  static void configure() {
    if (System.getProperty("java.util.logging.config.file") != null
        || System.getProperty("java.util.logging.config.class") != null
        || System.getProperty("java.util.logging.SimpleFormatter.format") != null) {
      return;
    }
    LogManager.getLogManager().reset();
    console = new ConsoleHandler();
    console.setFormatter(new LineFormatter());
    Logger.getLogger("").addHandler(console);
  }

  /**
   * Logs {@code level} and above ({@code relay.log.level}), unless the user configured logging
   * (then their configuration decides).
   */
  static void level(Level level) {
    if (console == null) {
      return;
    }
    Logger.getLogger("").setLevel(level);
    console.setLevel(level);
  }

  /** {@code 2026-11-22T15:04:05.123Z INFO io.prwrelay.server: message}, one line per record. */
  static final class LineFormatter extends Formatter {
    @Override
    public String format(LogRecord r) {
      StringBuilder sb = new StringBuilder(128);
      TIME.formatTo(r.getInstant(), sb);
      sb.append(' ')
          .append(r.getLevel().getName())
          .append(' ')
          .append(r.getLoggerName())
          .append(": ")
          .append(formatMessage(r));
      if (r.getThrown() != null) {
        StringWriter trace = new StringWriter();
        r.getThrown().printStackTrace(new PrintWriter(trace));
        sb.append('\n').append(trace.toString().stripTrailing());
      }
      return sb.append('\n').toString();
    }
  }
}
