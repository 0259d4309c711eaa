package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** One line per tenant and kind per interval, counting what it left out; recoveries always. */
class LaneLogTest {
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
  private final LaneLog log = new LaneLog(Duration.ofSeconds(10), ticker);

  @BeforeEach
  void listen() {
    logger.addHandler(handler);
  }

  @AfterEach
  void stopListening() {
    logger.removeHandler(handler);
  }

  private static Fragment fragment(String tenant) {
    return new Fragment(tenant, Unpooled.EMPTY_BUFFER, SeriesCounts.NONE, 0, (f, o) -> {});
  }

  private static FragmentOutcome failed(int status) {
    return new FragmentOutcome(
        status == 429 ? Kind.THROTTLED : status >= 500 ? Kind.UNAVAILABLE : Kind.REJECTED,
        status,
        "downstream answered " + status + ": nope",
        -1,
        2);
  }

  @Test
  void logsOncePerTenantAndStatusPerInterval() {
    log.finished(fragment("a"), failed(500));
    log.finished(fragment("a"), failed(500));
    log.finished(fragment("a"), failed(500));
    log.finished(fragment("a"), failed(400));
    log.finished(fragment("b"), failed(500));
    assertEquals(3, lines.size(), lines.toString());
    assertEquals(
        "batch for tenant a not delivered after 2 attempts: downstream answered 500: nope",
        lines.get(0));
    ticker.advanceMillis(10_000);
    log.finished(fragment("a"), failed(500));
    assertEquals(4, lines.size());
    assertTrue(lines.get(3).endsWith("(2 similar events not logged)"), lines.get(3));
  }

  @Test
  void acceptedFragmentsAreNotLogged() {
    log.finished(fragment("a"), new FragmentOutcome(Kind.DELIVERED, 200, "", -1, 1));
    log.finished(fragment("a"), new FragmentOutcome(Kind.QUEUED, 204, "", -1, 0));
    assertTrue(lines.isEmpty());
  }

  @Test
  void aLaneStartingToBackOffIsLoggedOncePerIntervalAndEveryRecovery() {
    long delay = TimeUnit.MILLISECONDS.toNanos(200);
    log.stateChanged("a", Lane.State.BACKING_OFF, "downstream answered 503: down", delay);
    log.stateChanged("a", Lane.State.BACKING_OFF, "downstream answered 503: down", delay);
    log.stateChanged("a", Lane.State.HEALTHY, "", 0);
    log.stateChanged("a", Lane.State.THROTTLED, "downstream answered 429: limit", delay);
    assertEquals(
        List.of(
            "tenant a: lane backing off for 200 ms after downstream answered 503: down",
            "tenant a: downstream accepts again, lane healthy",
            "tenant a: lane throttled for 200 ms after downstream answered 429: limit"),
        lines);
  }

  @Test
  void aLaneThrottledWithoutRetryAfterIsLoggedThrottledUntilASendSucceeds() {
    log.stateChanged("a", Lane.State.THROTTLED, "downstream answered 429: limit", 0);
    assertEquals(
        List.of(
            "tenant a: lane throttled until a send succeeds after downstream answered 429: limit"),
        lines);
  }

  @Test
  void queuedBatchesTheDownstreamRejectedAreLogged() {
    log.drained("a", 3, 30, new AttemptOutcome(400, "too old", -1));
    log.drained("a", 3, 30, new AttemptOutcome(200, "", -1));
    assertEquals(
        List.of(
            "dropped 3 queued batches (30 series) of tenant a: downstream answered 400: too old"),
        lines);
  }
}
