package io.prwrelay.server.write;

import io.prwrelay.server.lane.BatchResult;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import io.prwrelay.server.metrics.RelayMetrics;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * Counts and logs the batches of throttled tenants dropped under {@code
 * relay.delivery.throttled.policy=drop}: every one in {@code
 * relay_tenant_series_dropped_total{reason="throttled"}}, and one log line per interval naming the
 * first {@value #MAX_TENANTS_LOGGED} tenants dropped in it with their series and requests, and the
 * series and batches of all others as one sum, however many requests and tenants were dropped.
 *
 * <p>Bound: {@value #MAX_TENANTS_LOGGED} tenant IDs (at most 150 characters each, ≈ 7 KB with their
 * counts) between two lines; the others are not kept, only summed. Thread-safe.
 */
final class ThrottledDropLog {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.server");

  /** At most one line per this interval. */
  static final long INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

  /** Tenants named in one line; the rest are counted. */
  static final int MAX_TENANTS_LOGGED = 20;

  private final RelayMetrics metrics;
  private final Map<String, long[]> pending = new LinkedHashMap<>();

  /** Series and batches dropped of tenants past the first {@value #MAX_TENANTS_LOGGED}. */
  private long otherSeries;

  private long otherBatches;
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
          long[] c = pending.get(r.tenant());
          if (c == null && pending.size() < MAX_TENANTS_LOGGED) {
            c = new long[2];
            pending.put(r.tenant(), c);
          }
          if (c == null) {
            otherSeries += r.series();
            otherBatches++;
          } else {
            c[0] += r.series();
            c[1]++;
          }
        }
      }
      if (!logged || now - lastLogNanos >= INTERVAL_NANOS) {
        line = describe(logged ? now - lastLogNanos : 0);
        pending.clear();
        otherSeries = 0;
        otherBatches = 0;
        lastLogNanos = now;
        logged = true;
      }
    }
    if (line != null) {
      LOG.warning(line);
    }
  }

  /** Tenants held for the next line (at most {@value #MAX_TENANTS_LOGGED}). */
  synchronized int held() {
    return pending.size();
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
      sb.append(n++ == 0 ? " " : ", ")
          .append(e.getKey())
          .append(' ')
          .append(e.getValue()[0])
          .append(" series in ")
          .append(e.getValue()[1])
          .append(e.getValue()[1] == 1 ? " request" : " requests");
    }
    if (otherBatches > 0) {
      sb.append(" ... and ")
          .append(otherSeries)
          .append(" series in ")
          .append(otherBatches)
          .append(otherBatches == 1 ? " batch" : " batches")
          .append(" of more tenants");
    }
    return sb.toString();
  }
}
