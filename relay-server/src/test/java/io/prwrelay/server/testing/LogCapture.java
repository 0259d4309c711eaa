package io.prwrelay.server.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Collects what one of the relay's loggers logs during each test, from any thread: {@code
 * \@RegisterExtension final LogCapture log = new LogCapture("io.prwrelay.downstream");}.
 */
public final class LogCapture implements BeforeEachCallback, AfterEachCallback {
  private final Logger logger;
  private final List<LogRecord> records = new ArrayList<>();
  private final Handler handler =
      new Handler() {
        @Override
        public void publish(LogRecord r) {
          synchronized (records) {
            records.add(r);
          }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  /**
   * @param loggerName e.g. {@code io.prwrelay.downstream}
   */
  public LogCapture(String loggerName) {
    this.logger = Logger.getLogger(loggerName);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    synchronized (records) {
      records.clear();
    }
    logger.addHandler(handler);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    logger.removeHandler(handler);
  }

  /** The records logged so far in this test, oldest first. */
  public List<LogRecord> records() {
    synchronized (records) {
      return new ArrayList<>(records);
    }
  }

  /** The messages logged so far in this test, oldest first (unformatted). */
  public List<String> messages() {
    return records().stream().map(LogRecord::getMessage).toList();
  }
}
