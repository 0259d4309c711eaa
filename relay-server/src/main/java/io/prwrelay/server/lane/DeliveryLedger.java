package io.prwrelay.server.lane;

import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Which tenants of a request body were already delivered, so that a sender's retry of the same body
 * sends only the tenants that were not.
 *
 * <p>An entry is written only when a request is answered with a failure (the sender will retry it):
 * for each tenant of that request whose batch was accepted downstream, {@code (hash of the
 * compressed body, its length, tenant)}. Entries expire after a fixed time and the oldest are
 * forgotten beyond a fixed count; forgetting an entry only means a retry may deliver that tenant's
 * batch a second time (at-least-once), never that data is lost. Thread-safe.
 */
public final class DeliveryLedger {
  private final int maxEntries;
  private final long ttlNanos;
  private final LongSupplier clock;
  private final Map<Key, Long> expiry = new ConcurrentHashMap<>();
  private final Queue<Key> order = new ConcurrentLinkedQueue<>();
  private final AtomicInteger size = new AtomicInteger();

  /** One delivered tenant of one body. */
  record Key(long hash, int length, String tenant) {}

  /**
   * @param maxEntries entries kept at most; 0 disables the ledger
   * @param ttlNanos how long an entry is kept
   * @param clock nanosecond clock (the event loop's ticker)
   */
  public DeliveryLedger(int maxEntries, long ttlNanos, LongSupplier clock) {
    this.maxEntries = maxEntries;
    this.ttlNanos = ttlNanos;
    this.clock = clock;
  }

  /** True when nothing is remembered: callers then skip hashing the body. */
  public boolean isEmpty() {
    return size.get() == 0;
  }

  /** Entries currently remembered. */
  public int size() {
    return size.get();
  }

  /** Whether {@code tenant}'s batch of the body {@code body} was delivered. */
  public boolean delivered(LedgerKey body, String tenant) {
    Key k = new Key(body.hash(), body.length(), tenant);
    Long until = expiry.get(k);
    if (until == null) {
      return false;
    }
    if (clock.getAsLong() - until >= 0) {
      if (expiry.remove(k, until)) {
        size.decrementAndGet();
      }
      return false;
    }
    return true;
  }

  /** True unless the ledger was configured with no entries. */
  public boolean enabled() {
    return maxEntries > 0;
  }

  /** Remembers that {@code tenant}'s batch of the body {@code body} was delivered. */
  public void record(LedgerKey body, String tenant) {
    if (maxEntries <= 0) {
      return;
    }
    long now = clock.getAsLong();
    Key k = new Key(body.hash(), body.length(), tenant);
    if (expiry.put(k, now + ttlNanos) == null) {
      size.incrementAndGet();
      order.add(k);
    }
    trim(now);
  }

  /** Forgets expired entries and, beyond {@code maxEntries}, the oldest ones. */
  private void trim(long now) {
    while (true) {
      Key oldest = order.peek();
      if (oldest == null) {
        return;
      }
      Long until = expiry.get(oldest);
      boolean expired = until == null || now - until >= 0;
      if (!expired && size.get() <= maxEntries) {
        return;
      }
      if (order.remove(oldest) && until != null && expiry.remove(oldest, until)) {
        size.decrementAndGet();
      }
    }
  }
}
