package io.prwrelay.server.lane;

import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.server.downstream.RetryPolicy;
import io.prwrelay.server.downstream.TenantSender;

/** What every lane shares: settings, the sender, buffers, backoff policy and the observer. */
final class LaneContext {
  final LaneSettings settings;
  final TenantSender sender;
  final ByteBufAllocator alloc;
  final RetryPolicy retryPolicy;
  final LaneObserver observer;
  final long lingerNanos;
  final long attemptTimeoutNanos;

  LaneContext(
      LaneSettings settings,
      TenantSender sender,
      ByteBufAllocator alloc,
      RetryPolicy retryPolicy,
      LaneObserver observer) {
    this.settings = settings;
    this.sender = sender;
    this.alloc = alloc;
    this.retryPolicy = retryPolicy;
    this.observer = observer;
    this.lingerNanos = settings.linger().toNanos();
    this.attemptTimeoutNanos = settings.attemptTimeout().toNanos();
  }
}
