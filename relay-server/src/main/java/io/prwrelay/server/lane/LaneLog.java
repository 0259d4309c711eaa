package io.prwrelay.server.lane;

import io.netty.util.concurrent.Ticker;
import io.prwrelay.server.downstream.AttemptOutcome;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;

/**
 * Logs what goes wrong in the lanes without log storms: fragments that were not delivered, queued
 * records the downstream rejected, and a lane starting to back off — at most one line per tenant
 * and kind per interval, each carrying how many similar events were not logged since — plus one
 * line whenever a lane recovers. The tenant ID is safe to log (it passed tenant ID validation);
 * request contents and credentials never are logged. Thread-safe: every event loop reports here.
 */
public final class LaneLog implements LaneObserver {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.downstream");
  private static final int MAX_KEYS = 10_000;

  private final long intervalNanos;
  private final Ticker ticker;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  /**
   * @param interval at most one line per tenant and kind per interval
   * @param ticker the clock of the interval
   */
  public LaneLog(Duration interval, Ticker ticker) {
    this.intervalNanos = interval.toNanos();
    this.ticker = ticker;
  }

  @Override
  public void finished(Fragment f, FragmentOutcome o) {
    if (o.accepted()) {
      return;
    }
    String code = o.status() == AttemptOutcome.TRANSPORT_FAILURE ? "error" : "" + o.status();
    log(
        f.tenant() + " " + code,
        "batch for tenant "
            + f.tenant()
            + " not delivered after "
            + o.attempts()
            + (o.attempts() == 1 ? " attempt: " : " attempts: ")
            + o.message().replace('\n', ' '));
  }

  @Override
  public void drained(String tenant, long records, long series, AttemptOutcome outcome) {
    if (outcome.success()) {
      return;
    }
    log(
        tenant + " " + outcome.code(),
        "dropped "
            + records
            + " queued batches ("
            + series
            + " series) of tenant "
            + tenant
            + ": "
            + outcome.describe().replace('\n', ' '));
  }

  @Override
  public void stateChanged(String tenant, Lane.State state, String reason, long delayNanos) {
    if (state == Lane.State.HEALTHY) {
      LOG.info("tenant " + tenant + ": downstream accepts again, lane healthy");
      return;
    }
    // A 429 without Retry-After holds nothing back (delay 0): the lane is throttled all the same.
    log(
        tenant + " " + state,
        "tenant "
            + tenant
            + ": lane "
            + (state == Lane.State.THROTTLED ? "throttled" : "backing off")
            + (delayNanos > 0
                ? " for " + TimeUnit.NANOSECONDS.toMillis(delayNanos) + " ms"
                : " until a send succeeds")
            + " after "
            + reason.replace('\n', ' '));
  }

  private void log(String key, String line) {
    long now = ticker.nanoTime();
    if (windows.size() > MAX_KEYS) {
      windows.clear();
    }
    Window w = windows.computeIfAbsent(key, k -> new Window(now - intervalNanos));
    long last = w.lastLogged.get();
    if (now - last < intervalNanos || !w.lastLogged.compareAndSet(last, now)) {
      w.suppressed.incrementAndGet();
      return;
    }
    long suppressed = w.suppressed.getAndSet(0);
    LOG.warning(line + (suppressed > 0 ? " (" + suppressed + " similar events not logged)" : ""));
  }

  private static final class Window {
    final AtomicLong lastLogged;
    final AtomicLong suppressed = new AtomicLong();

    Window(long lastLogged) {
      this.lastLogged = new AtomicLong(lastLogged);
    }
  }
}
