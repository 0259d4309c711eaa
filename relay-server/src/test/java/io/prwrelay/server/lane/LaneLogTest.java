package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import io.prwrelay.server.testing.LogCapture;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** One line per tenant and kind per interval, counting what it left out; recoveries always. */
class LaneLogTest {
  @RegisterExtension final LogCapture logged = new LogCapture("io.prwrelay.downstream");
  private final MockTicker ticker = Ticker.newMockTicker();
  private final LaneLog log = new LaneLog(Duration.ofSeconds(10), ticker);

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
    assertEquals(3, logged.messages().size(), logged.messages().toString());
    assertEquals(
        "batch for tenant a not delivered after 2 attempts: downstream answered 500: nope",
        logged.messages().get(0));
    ticker.advanceMillis(10_000);
    log.finished(fragment("a"), failed(500));
    assertEquals(4, logged.messages().size());
    assertTrue(
        logged.messages().get(3).endsWith("(2 similar events not logged)"),
        logged.messages().get(3));
  }

  @Test
  void acceptedFragmentsAreNotLogged() {
    log.finished(fragment("a"), new FragmentOutcome(Kind.DELIVERED, 200, "", -1, 1));
    log.finished(fragment("a"), new FragmentOutcome(Kind.QUEUED, 204, "", -1, 0));
    assertTrue(logged.messages().isEmpty());
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
        logged.messages());
  }

  @Test
  void aLaneThrottledWithoutRetryAfterIsLoggedThrottledUntilASendSucceeds() {
    log.stateChanged("a", Lane.State.THROTTLED, "downstream answered 429: limit", 0);
    assertEquals(
        List.of(
            "tenant a: lane throttled until a send succeeds after downstream answered 429: limit"),
        logged.messages());
  }

  @Test
  void aLaneStartingToRejectIsLoggedOnceAndItsRecoveryOnce() {
    String limit = "downstream answered 400: per-user series limit of 5 exceeded";
    log.stateChanged("a", Lane.State.REJECTING, limit, 0);
    log.stateChanged("a", Lane.State.HEALTHY, "", 0);
    assertEquals(
        List.of(
            "tenant a: lane rejecting, the downstream refused its last 3 sends for good and"
                + " accepted none since: "
                + limit,
            "tenant a: downstream accepts again, lane healthy"),
        logged.messages());
  }

  /** A downstream whose series limit refuses 500 tenants at once: one line an interval. */
  @Test
  void manyTenantsStartingToRejectAlikeAreAggregated() {
    for (int t = 0; t < 500; t++) {
      log.stateChanged(
          "t-" + t, Lane.State.REJECTING, "downstream answered 400: series limit of 5", 0);
    }
    assertEquals(LaneLog.TENANT_LINES, logged.messages().size(), logged.messages().toString());
    ticker.advanceMillis(10_000);
    log.tick();
    assertEquals(
        "downstream answered 400: 500 tenants failing in the last 10s, e.g. t-0, t-1, t-2, …",
        logged.messages().get(logged.messages().size() - 1));
  }

  @Test
  void queuedBatchesTheDownstreamRejectedAreLogged() {
    log.drained("a", 3, 30, new AttemptOutcome(400, "too old", -1));
    log.drained("a", 3, 30, new AttemptOutcome(200, "", -1));
    assertEquals(
        List.of(
            "dropped 3 queued batches (30 series) of tenant a: downstream answered 400: too old"),
        logged.messages());
  }

  private static FragmentOutcome refused() {
    return new FragmentOutcome(
        Kind.UNAVAILABLE,
        AttemptOutcome.TRANSPORT_FAILURE,
        "cannot connect to 127.0.0.1:9: finishConnect(..) failed: Connection refused",
        -1,
        3);
  }

  @Test
  void manyTenantsFailingAlikeLogOneAggregateLinePerIntervalNamingTheCount() {
    long delay = TimeUnit.MILLISECONDS.toNanos(200);
    for (int round = 0; round < 3; round++) {
      for (int t = 0; t < 500; t++) {
        String tenant = String.format("t-%03d", t);
        log.stateChanged(
            tenant,
            Lane.State.BACKING_OFF,
            "cannot connect to 127.0.0.1:9: Connection refused",
            delay);
        log.finished(fragment(tenant), refused());
      }
    }
    // The first five tenants have logged.messages() of their own (backing off, not delivered), no
    // more.
    assertEquals(2 * LaneLog.TENANT_LINES, logged.messages().size(), logged.messages().toString());
    assertTrue(
        logged.messages().get(0).startsWith("tenant t-000: lane backing off"),
        logged.messages().get(0));
    ticker.advanceMillis(10_000);
    log.tick();
    assertEquals(
        2 * LaneLog.TENANT_LINES + 1, logged.messages().size(), logged.messages().toString());
    assertEquals(
        "downstream unreachable (connection refused): 500 tenants failing in the last 10s, e.g."
            + " t-000, t-001, t-002, …",
        logged.messages().get(logged.messages().size() - 1));
    // While the outage goes on: one line per interval, nothing per tenant.
    for (int interval = 0; interval < 3; interval++) {
      for (int t = 0; t < 500; t++) {
        log.finished(fragment(String.format("t-%03d", t)), refused());
      }
      ticker.advanceMillis(10_000);
      log.tick();
    }
    assertEquals(
        2 * LaneLog.TENANT_LINES + 4, logged.messages().size(), logged.messages().toString());
    assertTrue(
        logged.messages().get(logged.messages().size() - 1).contains(": 500 tenants failing"),
        logged.messages().toString());
  }

  @Test
  void manyRecoveriesAreAggregatedToo() {
    for (int t = 0; t < 50; t++) {
      log.stateChanged("t-" + t, Lane.State.HEALTHY, "", 0);
    }
    assertEquals(LaneLog.TENANT_LINES, logged.messages().size(), logged.messages().toString());
    ticker.advanceMillis(10_000);
    log.tick();
    assertEquals(
        "50 tenants recovered in the last 10s (downstream accepts again, lane healthy), e.g. t-0,"
            + " t-1, t-2, …",
        logged.messages().get(logged.messages().size() - 1));
  }

  @Test
  void failuresAreGroupedByAReasonThatDoesNotNameTheTenant() {
    assertEquals(
        "downstream unreachable (connection refused)",
        LaneLog.reasonOf(0, "cannot connect to cortex:9009: Connection refused"));
    assertEquals(
        "downstream unreachable (connection refused)",
        LaneLog.reasonOf(
            503, "the tenant's lane is backing off after cannot connect to x: Connection refused"));
    assertEquals(
        "downstream not answering (timeout)", LaneLog.reasonOf(0, "no response within 5000 ms"));
    assertEquals(
        "downstream answered 503",
        LaneLog.reasonOf(503, "the tenant's lane is backing off after downstream answered 503: x"));
    assertEquals("downstream answered 429", LaneLog.reasonOf(429, "downstream answered 429: x"));
    assertEquals(
        "batches not sent within the request deadline",
        LaneLog.reasonOf(503, "not sent within the request deadline: 2 downstream requests"));
    assertEquals(
        "cannot compress the batch: N bytes",
        LaneLog.reasonOf(500, "cannot compress the batch: 12345 bytes"));
  }
}
