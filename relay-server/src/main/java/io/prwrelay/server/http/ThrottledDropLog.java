package io.prwrelay.server.http;

import io.prwrelay.server.lane.BatchResult;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import io.prwrelay.server.metrics.RelayMetrics;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * Counts and logs the batches of throttled tenants dropped under {@code
 * relay.delivery.throttled.policy=drop}: every one in {@code
 * relay_tenant_series_dropped_total{reason="throttled"}}, and one log line per interval naming each
 * tenant with its series and requests (the first {@value #MAX_TENANTS_LOGGED}), however many
 * requests were dropped in it. Thread-safe.
 */
final class ThrottledDropLog {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.server");

  /** At most one line per this interval. */
  static final long INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

  /** Tenants named in one line; the rest are counted. */
  static final int MAX_TENANTS_LOGGED = 20;

  private final RelayMetrics metrics;
  private final Map<String, long[]> pending = new TreeMap<>();
  private long lastLogNanos;
  private boolean logged;

  ThrottledDropLog(RelayMetrics metrics) {
    this.metrics = metrics;
  }

  /** The throttled batches of a request answered 400 under policy drop. */
  void dropped(List<? extends BatchResult> results) {
    long now = System.nanoTime();
    String line = null;
    synchronized (this) {
      for (BatchResult r : results) {
        if (r.outcome().kind() == Kind.THROTTLED) {
          metrics.throttledDropped(r.tenant(), r.series());
          long[] c = pending.computeIfAbsent(r.tenant(), t -> new long[2]);
          c[0] += r.series();
          c[1]++;
        }
      }
      if (!logged || now - lastLogNanos >= INTERVAL_NANOS) {
        line = describe(logged ? now - lastLogNanos : 0);
        pending.clear();
        lastLogNanos = now;
        logged = true;
      }
    }
    if (line != null) {
      LOG.warning(line);
    }
  }

  private String describe(long sinceNanos) {
    StringBuilder sb =
        new StringBuilder("dropped the batches of tenants over their downstream limit (")
            .append("relay.delivery.throttled.policy=drop)");
    if (sinceNanos > 0) {
      sb.append(" in the last ").append(TimeUnit.NANOSECONDS.toSeconds(sinceNanos)).append(" s");
    }
    sb.append(':');
    int n = 0;
    for (Map.Entry<String, long[]> e : pending.entrySet()) {
      if (n++ == MAX_TENANTS_LOGGED) {
        sb.append(" ... and ").append(pending.size() - MAX_TENANTS_LOGGED).append(" more tenants");
        break;
      }
      sb.append(n == 1 ? " " : ", ")
          .append(e.getKey())
          .append(' ')
          .append(e.getValue()[0])
          .append(" series in ")
          .append(e.getValue()[1])
          .append(e.getValue()[1] == 1 ? " request" : " requests");
    }
    return sb.toString();
  }
}
