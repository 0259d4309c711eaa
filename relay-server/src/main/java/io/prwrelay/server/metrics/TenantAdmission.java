package io.prwrelay.server.metrics;

import io.netty.util.concurrent.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Which tenants have meters of their own: at most {@code relay.metrics.max-tenants} of them, so
 * that a tenant cardinality explosion cannot become a metrics cardinality explosion. Every other
 * tenant shares the meters of {@link #OTHER}.
 *
 * <p>Until the first ranking the first tenants seen are admitted. Once per interval (a minute in
 * the relay), on the first {@link #routed} after it ends, the tenants are ranked by the series
 * routed to them during the interval and only the top ones stay admitted; the meters of a tenant
 * that falls out are removed ({@code remove}), and its series count under {@link #OTHER} from then
 * on. The interval is measured on an injected {@link Ticker}, so tests move time instead of
 * sleeping.
 *
 * <p>Thread-safe: {@link #routed} and {@link #meters} run on every event loop. An admitted tenant's
 * meters are found with one map lookup; admission and ranking take this object's lock.
 *
 * @param <M> the meters of one tenant label
 */
final class TenantAdmission<M> {
  /** Tag value for tenants beyond the bound. */
  static final String OTHER = "other";

  /** Distinct tenants whose volume an interval tracks, as a multiple of the bound. */
  private static final int WINDOW_LIMIT = 10;

  private final int maxTenants;
  private final long intervalNanos;
  private final Ticker ticker;
  private final Function<String, M> create;
  private final Consumer<M> remove;
  private final Map<String, M> meters = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> window = new ConcurrentHashMap<>();
  private final AtomicLong nextRanking;
  private volatile Set<String> admitted = ConcurrentHashMap.newKeySet();

  /**
   * @param create the meters of a tenant label (a tenant, or {@link #OTHER}), called once per label
   *     admitted
   * @param remove unregisters the meters of a tenant that fell out of the top
   */
  TenantAdmission(
      int maxTenants,
      Duration interval,
      Ticker ticker,
      Function<String, M> create,
      Consumer<M> remove) {
    this.maxTenants = maxTenants;
    this.intervalNanos = interval.toNanos();
    this.ticker = ticker;
    this.create = create;
    this.remove = remove;
    this.nextRanking = new AtomicLong(ticker.nanoTime() + intervalNanos);
  }

  /**
   * {@code series} series were routed to {@code tenant}: counted for this interval's ranking, which
   * runs first if the previous interval has ended.
   */
  void routed(String tenant, long series) {
    maybeRank();
    LongAdder volume = window.get(tenant);
    if (volume == null && window.size() < WINDOW_LIMIT * Math.max(1, maxTenants)) {
      volume = window.computeIfAbsent(tenant, t -> new LongAdder());
    }
    if (volume != null) {
      volume.add(series);
    }
  }

  /** The meters of {@code tenant}, or of {@link #OTHER} when it is not (and cannot be) admitted. */
  M meters(String tenant) {
    M own = meters.get(tenant);
    if (own != null) {
      return own;
    }
    Set<String> a = admitted;
    if (!a.contains(tenant)) {
      synchronized (this) {
        a = admitted;
        if (!a.contains(tenant)) {
          if (a.size() >= maxTenants) {
            return labelled(OTHER);
          }
          a.add(tenant);
        }
      }
    }
    return labelled(tenant);
  }

  /** The tenants with meters of their own now ({@link #OTHER} not included). */
  List<String> labelledTenants() {
    List<String> out = new ArrayList<>(meters.size());
    for (String t : meters.keySet()) {
      if (!t.equals(OTHER)) {
        out.add(t);
      }
    }
    return out;
  }

  private M labelled(String label) {
    M m = meters.get(label);
    return m != null ? m : meters.computeIfAbsent(label, create);
  }

  /** Ranks the tenants by the volume of the interval that ended, once per interval. */
  private void maybeRank() {
    long now = ticker.nanoTime();
    long due = nextRanking.get();
    if (now - due < 0 || !nextRanking.compareAndSet(due, now + intervalNanos)) {
      return;
    }
    synchronized (this) {
      List<Map.Entry<String, LongAdder>> ranked = new ArrayList<>(window.entrySet());
      ranked.sort((x, y) -> Long.compare(y.getValue().sum(), x.getValue().sum()));
      Set<String> next = ConcurrentHashMap.newKeySet();
      for (int i = 0; i < ranked.size() && next.size() < maxTenants; i++) {
        next.add(ranked.get(i).getKey());
      }
      // Every labelled tenant not admitted any more, also one whose meters a thread created while
      // this ranking ran: only admitted tenants may keep meters of their own.
      for (Iterator<Map.Entry<String, M>> it = meters.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<String, M> e = it.next();
        if (!e.getKey().equals(OTHER) && !next.contains(e.getKey())) {
          it.remove();
          remove.accept(e.getValue());
        }
      }
      admitted = next;
      window.clear();
    }
  }
}
