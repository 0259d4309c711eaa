package io.prwrelay.server.downstream;

import io.netty.util.concurrent.Ticker;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;

/**
 * Logs tenant batches that were not delivered, without log storms: at most one line per tenant and
 * status per interval, carrying how many similar failures were suppressed since the last line. The
 * tenant ID is safe to log (it passed tenant ID validation); request contents and credentials never
 * are logged. Thread-safe: every event loop reports here.
 */
public final class FailureLog implements DeliveryObserver {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.downstream");
  private static final int MAX_KEYS = 10_000;

  private final long intervalNanos;
  private final Ticker ticker;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  /**
   * @param interval at most one line per tenant and status per interval
   * @param ticker the clock of the interval
   */
  public FailureLog(Duration interval, Ticker ticker) {
    this.intervalNanos = interval.toNanos();
    this.ticker = ticker;
  }

  /** Logs {@code send} if it failed and no line for its tenant and status was logged lately. */
  @Override
  public void finished(TenantSend send) {
    if (send.last() == null || send.last().success()) {
      return;
    }
    String key = send.tenant() + " " + send.last().code();
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
    LOG.warning(
        "batch for tenant "
            + send.tenant()
            + " not delivered after "
            + send.attempts()
            + (send.attempts() == 1 ? " attempt: " : " attempts: ")
            + send.last().describe().replace('\n', ' ')
            + (suppressed > 0 ? " (" + suppressed + " similar failures not logged)" : ""));
  }

  private static final class Window {
    final AtomicLong lastLogged;
    final AtomicLong suppressed = new AtomicLong();

    Window(long lastLogged) {
      this.lastLogged = new AtomicLong(lastLogged);
    }
  }
}
