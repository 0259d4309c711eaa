package io.prwrelay.server.queue;

import java.util.Collection;
import java.util.concurrent.CompletableFuture;

/**
 * The tenants' queues as the lanes use them: each lane takes its tenant's {@link TenantQueue}, the
 * lanes resume the queues that hold records when they start, and they apply the age bound
 * periodically. {@link QueueStore} keeps them on disk; the tests' in-memory twin keeps them in
 * memory, on an event loop.
 */
public interface TenantQueues {
  /**
   * The queue of {@code tenant}, created if needed.
   *
   * @param tenant a valid tenant ID
   */
  TenantQueue queue(String tenant);

  /** Every tenant queue known, including empty ones (after a restart: every one kept). */
  Collection<? extends TenantQueue> queues();

  /**
   * The lane of {@code tenant} was forgotten and has no append under way: a queue holding nothing
   * and nothing on disk may be forgotten too, so that the tenants a store keeps in memory are those
   * with lanes or with data, not every name ever seen. Call it on the loop of the tenant's lane.
   */
  default void release(String tenant) {}

  /**
   * Drops the records of every tenant older than the age bound at {@code nowMillis}; call it
   * periodically.
   */
  CompletableFuture<Void> expire(long nowMillis);
}
