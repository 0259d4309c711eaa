package io.prwrelay.server.queue;

import io.netty.channel.EventLoop;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The in-memory twin of {@link QueueStore}: one {@link InMemoryTenantQueue} per tenant, each
 * completing its operations on {@code loop}. Lanes opened again over the same instance find the
 * records not acknowledged, as after a restart. Touched only on its loop.
 */
public final class InMemoryTenantQueues implements TenantQueues {
  private final EventLoop loop;
  private final Map<String, InMemoryTenantQueue> queues = new LinkedHashMap<>();

  public InMemoryTenantQueues(EventLoop loop) {
    this.loop = loop;
  }

  @Override
  public InMemoryTenantQueue queue(String tenant) {
    return queues.computeIfAbsent(tenant, t -> new InMemoryTenantQueue(t, loop));
  }

  @Override
  public Collection<InMemoryTenantQueue> queues() {
    return Collections.unmodifiableCollection(queues.values());
  }

  /** Keeps no age bound: drops nothing. */
  @Override
  public CompletableFuture<Void> expire(long nowMillis) {
    return CompletableFuture.completedFuture(null);
  }

  /** Records appended to any tenant's queue, acknowledged or not. */
  public long appended() {
    long n = 0;
    for (InMemoryTenantQueue q : queues.values()) {
      n += q.appended();
    }
    return n;
  }
}
