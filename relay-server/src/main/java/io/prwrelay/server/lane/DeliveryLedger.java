package io.prwrelay.server.lane;

import io.prwrelay.server.config.DeliveryConfig;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Which tenants of a request body were already delivered, so that a sender's retry of the same body
 * sends only the tenants that were not; and how often a body was answered 429.
 *
 * <p>Both are keyed by the sender and the body ({@link LedgerKey}): another sender's byte-identical
 * body (two Prometheus replicas sending the same metadata) is another entry, so one sender's
 * attempts never skip another's tenants nor count towards another's 429s.
 *
 * <p>An entry is written only when a request is answered with a failure (the sender will retry it)
 * and at least one of its tenants was delivered: for the body ({@code sender, hash of the
 * compressed body, its length}), the tenants delivered or, when they are fewer, the tenants not
 * delivered. A request of 1,000 tenants with one throttled costs one tenant name, not 999. The
 * ledger's size is the number of tenant names it holds; entries expire after a fixed time and the
 * oldest are forgotten beyond a fixed size. Forgetting an entry only means a retry may deliver
 * those tenants' batches a second time (at-least-once), never that data is lost.
 *
 * <p><b>Bounds.</b> At most {@code maxEntries} tenant names over all entries ({@code
 * relay.delivery.ledger.max-entries}); a name is the tenant ID string the router made (at most 150
 * bytes, referenced, not copied), and an entry of one name costs about 140 bytes of map node, key,
 * queue node and set besides: at most about 330 bytes a name, 33 MB of heap at the default 100,000.
 * At most {@value #MAX_THROTTLED_BODIES} bodies' 429 counts (about 100 bytes each, 6.5 MB). Both
 * are shared by all senders and fixed in size, outside the request memory budget; a sender that
 * fills either only pushes out the oldest entries, whose cost is a duplicate delivery, or a 429
 * answered again where a repeat could have been dropped. Thread-safe.
 */
public final class DeliveryLedger {
  /** Bodies whose 429 answers are counted at most; the oldest are forgotten beyond it. */
  static final int MAX_THROTTLED_BODIES = 65_536;

  private final int maxEntries;
  private final long ttlNanos;
  private final LongSupplier clock;
  private final Map<LedgerKey, Entry> bodies = new ConcurrentHashMap<>();
  private final Queue<LedgerKey> order = new ConcurrentLinkedQueue<>();
  private final AtomicInteger size = new AtomicInteger();
  private final DeliveryConfig.Throttled throttledPolicy;

  /** Bodies answered 429, oldest first; guarded by itself (touched only on 429 answers). */
  private final Map<LedgerKey, Throttled> throttled =
      new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<LedgerKey, Throttled> eldest) {
          return size() > MAX_THROTTLED_BODIES;
        }
      };

  /** The 429 answers given to one body: how many, and when the first was. */
  private record Throttled(int answers, long firstNanos) {}

  /**
   * What {@link #throttled} decided for a body about to be answered 429.
   *
   * @param drop answer 400 instead: the body was answered 429 too often or for too long
   * @param answers 429 answers already given to the body
   * @param sinceNanos time since its first 429 (0 for the first)
   */
  public record Throttling(boolean drop, int answers, long sinceNanos) {}

  /**
   * What is known of one body.
   *
   * @param listed tenant names: the delivered ones when {@code delivered}, else the others
   */
  private record Entry(Set<String> listed, boolean delivered, long until) {
    boolean isDelivered(String tenant) {
      return listed.contains(tenant) == delivered;
    }

    /** Its share of the ledger's size: the names it lists, at least one. */
    int weight() {
      return Math.max(1, listed.size());
    }
  }

  /**
   * @param maxEntries tenant names kept at most over all bodies; 0 disables the ledger
   * @param ttlNanos how long an entry is kept
   * @param clock nanosecond clock (the event loop's ticker)
   */
  public DeliveryLedger(int maxEntries, long ttlNanos, LongSupplier clock) {
    this(maxEntries, ttlNanos, clock, new DeliveryConfig.Throttled(true, 0, Duration.ZERO));
  }

  /**
   * @param maxEntries tenant names kept at most over all bodies; 0 disables the ledger of delivered
   *     tenants
   * @param ttlNanos how long an entry is kept
   * @param clock nanosecond clock (the event loop's ticker)
   * @param throttled how a body answered 429 again and again is answered
   */
  public DeliveryLedger(
      int maxEntries, long ttlNanos, LongSupplier clock, DeliveryConfig.Throttled throttled) {
    this.maxEntries = maxEntries;
    this.ttlNanos = ttlNanos;
    this.clock = clock;
    this.throttledPolicy = throttled;
  }

  /** Whether bodies answered 429 are counted at all (policy {@code drop}). */
  public boolean countsThrottled() {
    return !throttledPolicy.strict();
  }

  /**
   * Called when {@code body} is about to be answered 429 because its only failing tenants are
   * throttled. Under policy {@code drop}, once the body was answered 429 {@code retries} times, or
   * its first 429 is older than {@code retry-time}, it is to be answered 400 instead and is
   * forgotten; otherwise this 429 is counted. Under policy {@code strict} it is always 429.
   */
  public Throttling throttled(LedgerKey body) {
    if (throttledPolicy.strict()) {
      return new Throttling(false, 0, 0);
    }
    long now = clock.getAsLong();
    synchronized (throttled) {
      Throttled t = throttled.get(body);
      if (t != null && now - t.firstNanos() >= ttlNanos) {
        t = null;
      }
      if (t == null) {
        if (throttledPolicy.retries() == 0) {
          return new Throttling(true, 0, 0);
        }
        throttled.put(body, new Throttled(1, now));
        return new Throttling(false, 0, 0);
      }
      long since = now - t.firstNanos();
      if (t.answers() >= throttledPolicy.retries()
          || since >= throttledPolicy.retryTime().toNanos()) {
        throttled.remove(body);
        return new Throttling(true, t.answers(), since);
      }
      throttled.put(body, new Throttled(t.answers() + 1, t.firstNanos()));
      return new Throttling(false, t.answers(), since);
    }
  }

  /** True when nothing is remembered: callers then skip hashing the body. */
  public boolean isEmpty() {
    return size.get() == 0;
  }

  /** Tenant names currently remembered. */
  public int size() {
    return size.get();
  }

  /** Whether {@code tenant}'s batch of the body {@code body} was delivered. */
  public boolean delivered(LedgerKey body, String tenant) {
    Entry e = bodies.get(body);
    if (e == null) {
      return false;
    }
    if (clock.getAsLong() - e.until() >= 0) {
      forget(body, e);
      return false;
    }
    return e.isDelivered(tenant);
  }

  /** True unless the ledger was configured with no entries. */
  public boolean enabled() {
    return maxEntries > 0;
  }

  /**
   * Remembers which tenants of the body {@code body} were delivered, replacing what was known of
   * it. Nothing is written when none was.
   *
   * @param delivered the tenants whose batches were delivered
   * @param notDelivered the body's other tenants
   */
  public void record(
      LedgerKey body, Collection<String> delivered, Collection<String> notDelivered) {
    if (maxEntries <= 0 || delivered.isEmpty()) {
      return;
    }
    long now = clock.getAsLong();
    boolean listDelivered = delivered.size() <= notDelivered.size();
    Entry e =
        new Entry(
            Set.copyOf(listDelivered ? delivered : notDelivered), listDelivered, now + ttlNanos);
    Entry old = bodies.put(body, e);
    if (old == null) {
      order.add(body);
      size.addAndGet(e.weight());
    } else {
      size.addAndGet(e.weight() - old.weight());
    }
    trim(now);
  }

  private void forget(LedgerKey body, Entry e) {
    if (bodies.remove(body, e)) {
      size.addAndGet(-e.weight());
    }
  }

  /** Forgets expired entries and, beyond {@code maxEntries} tenant names, the oldest ones. */
  private void trim(long now) {
    while (true) {
      LedgerKey oldest = order.peek();
      if (oldest == null) {
        return;
      }
      Entry e = bodies.get(oldest);
      boolean expired = e == null || now - e.until() >= 0;
      if (!expired && size.get() <= maxEntries) {
        return;
      }
      if (order.remove(oldest) && e != null) {
        forget(oldest, e);
      }
    }
  }
}
