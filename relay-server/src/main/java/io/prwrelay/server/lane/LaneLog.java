package io.prwrelay.server.lane;

import io.netty.util.concurrent.Ticker;
import io.prwrelay.server.downstream.AttemptOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Logs what goes wrong in the lanes without log storms, whether one tenant fails or a thousand:
 * fragments that were not delivered, queued records the downstream rejected, a lane starting to
 * back off, a lane starting to reject ({@link Health}: once when it enters the state), and a lane
 * recovering.
 *
 * <p>Every event has a <em>reason</em> that does not depend on the tenant ({@link #reasonOf}: the
 * downstream's status, or the kind of transport failure such as {@code downstream unreachable
 * (connection refused)}). Within one interval:
 *
 * <ul>
 *   <li>the first {@value #TENANT_LINES} tenants failing for a reason get lines of their own, at
 *       most one per tenant and kind, each carrying how many similar events were not logged since;
 *   <li>when more tenants fail for the same reason, the interval ends with one aggregate line
 *       naming the reason, the number of tenants and a few of them ({@code downstream unreachable
 *       (connection refused): 500 tenants failing in the last 10s, e.g. a, b, c}); while that goes
 *       on (the previous interval was aggregated too) the reason logs only that line;
 *   <li>recoveries ({@code tenant t: downstream accepts again, lane healthy}) follow the same rule,
 *       at INFO.
 * </ul>
 *
 * So an outage of any number of tenants writes a bounded number of lines per interval: about
 * {@value #TENANT_LINES} × the kinds of line + 1 per reason in its first interval, 1 per reason
 * after. What it keeps is bounded too: at most {@value #MAX_TENANTS} tenants per reason and
 * interval (more are reported as "at least" that many) and {@value #MAX_KEYS} rate limit keys.
 * {@link #tick()} ends an interval when it is due; the owner calls it periodically (events call it
 * too), so the last aggregate of an outage is not held back until the next failure.
 *
 * <p>The tenant ID is safe to log (it passed tenant ID validation); request contents and
 * credentials never are logged. Thread-safe: every event loop reports here; a count may miss an
 * event that races with the end of an interval.
 */
public final class LaneLog implements LaneObserver {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.downstream");
  private static final int MAX_KEYS = 10_000;

  /** Tenants per reason and interval that get lines of their own. */
  static final int TENANT_LINES = 5;

  /** Tenants named as examples in an aggregate line. */
  private static final int EXAMPLES = 3;

  /** Distinct reasons tracked at once; more are counted as {@link #OTHER}. */
  private static final int MAX_REASONS = 64;

  /**
   * Distinct tenants counted per reason and interval; beyond it the line says "at least" this many.
   * Bounds what the log keeps: {@value #MAX_REASONS} + 1 reasons × this many tenant IDs (≤ 150
   * characters, ≈ 230 B with their set entry): ≈ 15 MB at worst, ≈ 230 KB per reason.
   */
  static final int MAX_TENANTS = 1_000;

  private static final String OTHER = "other failures";
  private static final String RECOVERED = "recovered";
  private static final Pattern ANSWERED = Pattern.compile("downstream answered (\\d{3})");
  private static final Pattern DIGITS = Pattern.compile("\\d+");

  private final long intervalNanos;
  private final String intervalText;
  private final Ticker ticker;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();
  private final Map<String, Reason> reasons = new ConcurrentHashMap<>();
  private final AtomicLong intervalStart;

  /**
   * @param interval at most one line per tenant and kind per interval; aggregate lines per interval
   * @param ticker the clock of the interval
   */
  public LaneLog(Duration interval, Ticker ticker) {
    this.intervalNanos = interval.toNanos();
    this.intervalText =
        interval.toMillis() % 1000 == 0 ? interval.toSeconds() + "s" : interval.toMillis() + "ms";
    this.ticker = ticker;
    this.intervalStart = new AtomicLong(ticker.nanoTime());
  }

  @Override
  public void finished(Fragment f, FragmentOutcome o) {
    if (o.accepted()) {
      return;
    }
    String code = o.status() == AttemptOutcome.TRANSPORT_FAILURE ? "error" : "" + o.status();
    String message = o.message().replace('\n', ' ');
    failure(
        f.tenant(),
        reasonOf(o.status(), message),
        f.tenant() + " " + code,
        "batch for tenant "
            + f.tenant()
            + " not delivered after "
            + o.attempts()
            + (o.attempts() == 1 ? " attempt: " : " attempts: ")
            + message);
  }

  @Override
  public void drained(String tenant, long records, long series, AttemptOutcome outcome) {
    if (outcome.success()) {
      return;
    }
    String message = outcome.describe().replace('\n', ' ');
    failure(
        tenant,
        reasonOf(outcome.status(), message),
        tenant + " " + outcome.code(),
        "dropped "
            + records
            + " queued batches ("
            + series
            + " series) of tenant "
            + tenant
            + ": "
            + message);
  }

  @Override
  public void stateChanged(String tenant, Lane.State state, String reason, long delayNanos) {
    if (state == Lane.State.HEALTHY) {
      tick();
      if (reason(RECOVERED).add(tenant)) {
        LOG.info("tenant " + tenant + ": downstream accepts again, lane healthy");
      }
      return;
    }
    // A 429 without Retry-After holds nothing back (delay 0): the lane is throttled all the same.
    String why = reason.replace('\n', ' ');
    if (state == Lane.State.REJECTING) {
      // Reported once when the lane enters the state; the next 2xx reports the recovery.
      failure(
          tenant,
          reasonOf(-1, why),
          tenant + " " + state,
          "tenant "
              + tenant
              + ": lane rejecting, the downstream refused its last "
              + Health.REJECTING_AFTER
              + " sends for good and accepted none since: "
              + why);
      return;
    }
    failure(
        tenant,
        reasonOf(-1, why),
        tenant + " " + state,
        "tenant "
            + tenant
            + ": lane "
            + (state == Lane.State.THROTTLED ? "throttled" : "backing off")
            + (delayNanos > 0
                ? " for " + TimeUnit.NANOSECONDS.toMillis(delayNanos) + " ms"
                : " until a send succeeds")
            + " after "
            + why);
  }

  /**
   * Ends the interval when it is due: logs one aggregate line for each reason that more than
   * {@value #TENANT_LINES} tenants failed for, and starts counting again. Call it periodically
   * (about once per interval); a call before the interval is over does nothing.
   */
  public void tick() {
    long now = ticker.nanoTime();
    long start = intervalStart.get();
    if (now - start < intervalNanos || !intervalStart.compareAndSet(start, now)) {
      return;
    }
    for (Map.Entry<String, Reason> e : reasons.entrySet()) {
      Reason r = e.getValue();
      int tenants = r.tenants.size();
      if (tenants > TENANT_LINES) {
        reasons.replace(e.getKey(), r, new Reason(true));
        logAggregate(e.getKey(), tenants, r.examples());
      } else {
        reasons.remove(e.getKey(), r);
      }
    }
  }

  /** Tenant IDs held for the aggregate lines of this interval, all reasons; for tests. */
  int tenantsHeld() {
    int n = 0;
    for (Reason r : reasons.values()) {
      n += r.tenants.size();
    }
    return n;
  }

  private void logAggregate(String reason, int tenants, List<String> examples) {
    String more = tenants > examples.size() ? ", …" : "";
    String count = tenants >= MAX_TENANTS ? "at least " + MAX_TENANTS : Integer.toString(tenants);
    if (reason.equals(RECOVERED)) {
      LOG.info(
          count
              + " tenants recovered in the last "
              + intervalText
              + " (downstream accepts again, lane healthy), e.g. "
              + String.join(", ", examples)
              + more);
      return;
    }
    LOG.warning(
        reason
            + ": "
            + count
            + " tenants failing in the last "
            + intervalText
            + ", e.g. "
            + String.join(", ", examples)
            + more);
  }

  /** One failure of {@code tenant}: its own line unless its reason is aggregated. */
  private void failure(String tenant, String reason, String key, String line) {
    tick();
    if (reason(reason).add(tenant)) {
      log(key, line);
    }
  }

  /** The reason's tally of this interval, created if needed ({@link #OTHER} beyond the bound). */
  private Reason reason(String reason) {
    Reason r = reasons.get(reason);
    if (r != null) {
      return r;
    }
    if (reasons.size() >= MAX_REASONS) {
      reason = OTHER;
    }
    return reasons.computeIfAbsent(reason, k -> new Reason(false));
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
    LOG.log(
        Level.WARNING,
        line + (suppressed > 0 ? " (" + suppressed + " similar events not logged)" : ""));
  }

  /**
   * What an event failed of, without the tenant: {@code downstream answered 503}, {@code downstream
   * unreachable (connection refused)}, {@code downstream not answering (timeout)}, ... so that many
   * tenants failing alike share one reason.
   *
   * @param status the HTTP status of the outcome ({@link AttemptOutcome#TRANSPORT_FAILURE} for
   *     none), or -1 when unknown
   * @param message the outcome's message, which names the downstream's answer or the transport
   *     problem (also when the relay answered for a lane backing off after it)
   */
  static String reasonOf(int status, String message) {
    String m = message.toLowerCase(Locale.ROOT);
    if (m.contains("connection refused")) {
      return "downstream unreachable (connection refused)";
    }
    if (m.contains("no route to host") || m.contains("network is unreachable")) {
      return "downstream unreachable (no route to host)";
    }
    if (m.contains("unknownhost")
        || m.contains("unresolved")
        || m.contains("name or service not known")) {
      return "downstream unreachable (unknown host)";
    }
    if (m.contains("connection timed out") || m.contains("connect timed out")) {
      return "downstream unreachable (connect timeout)";
    }
    if (m.contains("no response within")) {
      return "downstream not answering (timeout)";
    }
    if (m.contains("connection reset")) {
      return "downstream connection reset";
    }
    if (m.contains("connection closed before the downstream answered")) {
      return "downstream closed the connection";
    }
    if (m.contains("cannot connect to")) {
      return "downstream unreachable (connect failed)";
    }
    Matcher answered = ANSWERED.matcher(m);
    if (answered.find()) {
      return "downstream answered " + answered.group(1);
    }
    if (m.contains("tenant lane is full")) {
      return "tenant lanes full (relay.lanes.max-pending-bytes)";
    }
    if (m.contains("relay.lanes.max=")) {
      return "too many tenants busy at once (relay.lanes.max)";
    }
    if (m.contains("cannot write the tenant's queue")) {
      return "queue not writable";
    }
    if (m.contains("shutting down")) {
      return "the relay is shutting down";
    }
    if (m.contains("not sent within the request deadline")) {
      return "batches not sent within the request deadline";
    }
    // Another message of the relay's own: it names no tenant, so without its numbers it groups.
    String general = DIGITS.matcher(message).replaceAll("N");
    return general.isEmpty()
        ? OTHER
        : general.length() > 100 ? general.substring(0, 100) + "…" : general;
  }

  /** Per-tenant rate limit of one kind of line. */
  private static final class Window {
    final AtomicLong lastLogged;
    final AtomicLong suppressed = new AtomicLong();

    Window(long lastLogged) {
      this.lastLogged = new AtomicLong(lastLogged);
    }
  }

  /** The tenants that failed for one reason in the current interval. */
  private static final class Reason {
    /** The previous interval was aggregated: no line of a single tenant in this one. */
    final boolean aggregating;

    final Set<String> tenants = ConcurrentHashMap.newKeySet();
    private final List<String> first = new ArrayList<>(TENANT_LINES);

    Reason(boolean aggregating) {
      this.aggregating = aggregating;
    }

    /**
     * Counts {@code tenant}; true when it may have a line of its own: one of the first {@value
     * #TENANT_LINES} tenants of a reason that is not aggregated.
     */
    boolean add(String tenant) {
      if (tenants.size() < MAX_TENANTS) {
        tenants.add(tenant);
      }
      synchronized (first) {
        if (first.contains(tenant)) {
          return !aggregating;
        }
        if (first.size() < TENANT_LINES) {
          first.add(tenant);
          return !aggregating;
        }
      }
      return false;
    }

    List<String> examples() {
      synchronized (first) {
        return List.copyOf(first.subList(0, Math.min(EXAMPLES, first.size())));
      }
    }
  }
}
