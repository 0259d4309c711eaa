package io.prwrelay.server.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import io.prwrelay.core.encode.SeriesCounts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** One line per tenant and status per interval, counting what it left out. */
class FailureLogTest {
  private final Logger logger = Logger.getLogger("io.prwrelay.downstream");
  private final List<String> lines = new ArrayList<>();
  private final Handler handler =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          lines.add(record.getMessage());
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };
  private final MockTicker ticker = Ticker.newMockTicker();
  private final FailureLog log = new FailureLog(Duration.ofSeconds(10), ticker);

  @BeforeEach
  void listen() {
    logger.addHandler(handler);
  }

  @AfterEach
  void stopListening() {
    logger.removeHandler(handler);
  }

  private static TenantSend failed(String tenant, int status) {
    TenantSend s = new TenantSend(tenant, null, SeriesCounts.NONE, 0);
    s.attempts = 2;
    s.last = new AttemptOutcome(status, "nope", -1);
    return s;
  }

  @Test
  void logsOncePerTenantAndStatusPerInterval() {
    log.finished(failed("a", 500));
    log.finished(failed("a", 500));
    log.finished(failed("a", 500));
    log.finished(failed("a", 400));
    log.finished(failed("b", 500));
    assertEquals(3, lines.size(), lines.toString());
    assertEquals(
        "batch for tenant a not delivered after 2 attempts: downstream answered 500: nope",
        lines.get(0));
    ticker.advanceMillis(10_000);
    log.finished(failed("a", 500));
    assertEquals(4, lines.size());
    assertTrue(lines.get(3).endsWith("(2 similar failures not logged)"), lines.get(3));
  }

  @Test
  void acceptedBatchesAreNotLogged() {
    TenantSend ok = failed("a", 200);
    log.finished(ok);
    assertTrue(lines.isEmpty());
  }
}
