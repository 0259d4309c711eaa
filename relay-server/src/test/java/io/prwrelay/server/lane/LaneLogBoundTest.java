package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import io.prwrelay.server.testing.LogCapture;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * However many distinct tenants fail within an interval, the log keeps at most {@link
 * LaneLog#MAX_TENANTS} of them per reason and says "at least" that many; another reason's tenants
 * are still counted and logged.
 */
class LaneLogBoundTest {
  @RegisterExtension final LogCapture logged = new LogCapture("io.prwrelay.downstream");
  private final MockTicker ticker = Ticker.newMockTicker();
  private final LaneLog log = new LaneLog(Duration.ofSeconds(10), ticker);

  private static Fragment fragment(String tenant) {
    return new Fragment(tenant, Unpooled.EMPTY_BUFFER, SeriesCounts.NONE, 0, (f, o) -> {});
  }

  private static FragmentOutcome pastDeadline() {
    return new FragmentOutcome(
        Kind.UNAVAILABLE, 503, "batches not sent within the request deadline", -1, 0);
  }

  private static FragmentOutcome rejected() {
    return new FragmentOutcome(Kind.REJECTED, 400, "downstream answered 400: bad", -1, 1);
  }

  @Test
  void aSenderFailingAHundredThousandTenantsLeavesAThousandHeldAndOthersStillLogged() {
    for (int t = 0; t < 100_000; t++) {
      log.finished(fragment("flood-" + t), pastDeadline());
    }
    for (int t = 0; t < 7; t++) {
      log.finished(fragment("victim-" + t), rejected());
    }
    assertEquals(LaneLog.MAX_TENANTS + 7, log.tenantsHeld());
    ticker.advanceMillis(10_000);
    log.tick();
    String last = logged.messages().get(logged.messages().size() - 1);
    String before = logged.messages().get(logged.messages().size() - 2);
    String both = before + "\n" + last;
    assertTrue(
        both.contains(
            "batches not sent within the request deadline: at least 1000 tenants failing in the"
                + " last 10s, e.g. flood-0, flood-1, flood-2, …"),
        both);
    assertTrue(
        both.contains(
            "downstream answered 400: 7 tenants failing in the last 10s, e.g. victim-0, victim-1,"
                + " victim-2, …"),
        both);
    assertEquals(0, log.tenantsHeld());
  }
}
