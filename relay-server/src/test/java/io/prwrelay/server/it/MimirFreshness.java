package io.prwrelay.server.it;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How far behind the clock each tenant's newest sample in a {@link MimirProcess} falls while
 * senders write to it: every {@value #POLL_MILLIS} ms an instant query per tenant asks for the
 * newest sample timestamp of {@code selector}, and the most it lagged is kept. This is what a user
 * querying Mimir sees; it includes the sender's own batching (the sender's scrape interval and
 * batch deadline, about 1 s each in these tests).
 */
final class MimirFreshness {
  static final long POLL_MILLIS = 250;

  /** The window looked at first; only a tenant with nothing in it is looked up further back. */
  private static final Duration RECENT = Duration.ofSeconds(10);

  private static final Duration LONG_AGO = Duration.ofMinutes(10);

  private MimirFreshness() {}

  /**
   * Watches {@code tenants} for {@code watch} and returns, per tenant, the most its newest sample
   * was behind the clock at any poll (milliseconds; {@link Long#MAX_VALUE} when it had none).
   */
  static Map<String, Long> watch(
      MimirProcess mimir, List<String> tenants, String selector, Duration watch)
      throws InterruptedException {
    Map<String, Long> worst = new TreeMap<>();
    long end = System.nanoTime() + watch.toNanos();
    while (System.nanoTime() < end) {
      for (String tenant : tenants) {
        // The clock before the query: its own time is not the sender's delay.
        long asked = System.currentTimeMillis();
        long newest = newestMillis(mimir, tenant, selector);
        long lag = newest == Long.MIN_VALUE ? Long.MAX_VALUE : asked - newest;
        worst.merge(tenant, lag, Math::max);
      }
      Thread.sleep(POLL_MILLIS);
    }
    return worst;
  }

  /**
   * The newest timestamp of the samples {@code selector} selects, or {@code Long.MIN_VALUE}: read
   * from a range query, since Mimir's engine refuses {@code max(timestamp(...))} over series that
   * differ only in their name.
   */
  static long newestMillis(MimirProcess mimir, String tenant, String selector) {
    for (Duration window : List.of(RECENT, LONG_AGO)) {
      long newest = Long.MIN_VALUE;
      for (MimirProcess.StoredSeries s : mimir.samples(tenant, selector, window)) {
        newest = Math.max(newest, s.newestMillis());
      }
      if (newest != Long.MIN_VALUE) {
        return newest;
      }
    }
    return Long.MIN_VALUE;
  }
}
