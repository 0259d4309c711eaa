package io.prwrelay.server.limits;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes the per-tenant limits may take, all tenants together ({@code
 * relay.limits.max-memory-bytes}): every series filter and every tenant's state is reserved here
 * before it is allocated and given back when it is dropped. Its own budget, apart from the request
 * budget ({@code relay.server.max-inflight-bytes}): the filters live as long as their tenants, not
 * as long as a request. Thread-safe.
 */
final class LimitsMemory {
  private final long max;
  private final AtomicLong used = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();

  LimitsMemory(long max) {
    this.max = max;
  }

  /** Reserves {@code bytes}; {@code false} (and counted) when that would pass the bound. */
  boolean reserve(long bytes) {
    long u;
    do {
      u = used.get();
      if (u + bytes > max) {
        refused.incrementAndGet();
        return false;
      }
    } while (!used.compareAndSet(u, u + bytes));
    return true;
  }

  void release(long bytes) {
    used.addAndGet(-bytes);
  }

  long used() {
    return used.get();
  }

  long max() {
    return max;
  }

  /** Reservations refused since start. */
  long refused() {
    return refused.get();
  }
}
