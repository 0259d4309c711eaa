package io.prwrelay.server.lane;

import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.server.downstream.RetryPolicy;
import io.prwrelay.server.downstream.TenantSender;
import io.prwrelay.server.queue.QueueStore;
import java.util.function.LongSupplier;

/** What every lane shares: settings, the sender, buffers, backoff policy and the observer. */
final class LaneContext {
  final LaneSettings settings;
  final TenantSender sender;
  final ByteBufAllocator alloc;
  final RetryPolicy retryPolicy;
  final LaneObserver observer;
  final long lingerNanos;
  final long attemptTimeoutNanos;

  /** The on-disk queues in queue mode, {@code null} in sync mode. */
  final QueueStore store;

  /** Wall-clock milliseconds, kept with queued records for their age bound. */
  final LongSupplier wallMillis;

  /** Largest decompressed size of a merged queued batch. */
  final int maxDecompressedBytes;

  LaneContext(
      LaneSettings settings,
      TenantSender sender,
      ByteBufAllocator alloc,
      RetryPolicy retryPolicy,
      LaneObserver observer,
      QueueStore store,
      LongSupplier wallMillis,
      int maxDecompressedBytes) {
    this.store = store;
    this.wallMillis = wallMillis;
    this.maxDecompressedBytes = maxDecompressedBytes;
    this.settings = settings;
    this.sender = sender;
    this.alloc = alloc;
    this.retryPolicy = retryPolicy;
    this.observer = observer;
    this.lingerNanos = settings.linger().toNanos();
    this.attemptTimeoutNanos = settings.attemptTimeout().toNanos();
  }
}
