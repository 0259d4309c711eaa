package io.prwrelay.server.lane;

import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.downstream.RetryPolicy;
import io.prwrelay.server.downstream.TenantSender;
import io.prwrelay.server.queue.QueueStore;
import java.util.concurrent.atomic.AtomicLong;
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

  /** {@link LaneSettings#minInterval()}; 0 when sends are not spaced. */
  final long minIntervalNanos;

  /** The on-disk queues in queue mode, {@code null} in sync mode. */
  final QueueStore store;

  /** Wall-clock milliseconds, kept with queued records for their age bound. */
  final LongSupplier wallMillis;

  /** Largest decompressed size of a merged queued batch. */
  final int maxDecompressedBytes;

  /** The Remote Write version PRW 2.0 batches go downstream in. */
  final DownstreamProtocol protocol;

  /**
   * Compressed bytes that all lanes together keep in memory of what they appended to their queues
   * (queue mode), at most: beyond it records are read back from disk when their turn comes.
   */
  static final long KEPT_TOTAL_LIMIT = 64L << 20;

  final long keptTotalLimit;
  private final AtomicLong keptBytes = new AtomicLong();

  LaneContext(
      LaneSettings settings,
      TenantSender sender,
      ByteBufAllocator alloc,
      LaneObserver observer,
      Lanes.Queues queues,
      DownstreamProtocol protocol) {
    this.protocol = protocol;
    this.store = queues == null ? null : queues.store();
    this.wallMillis = queues == null ? System::currentTimeMillis : queues.wallMillis();
    this.maxDecompressedBytes = queues == null ? 0 : queues.maxDecompressedBytes();
    this.settings = settings;
    this.sender = sender;
    this.alloc = alloc;
    this.retryPolicy = new RetryPolicy(settings.initialBackoff(), settings.maxBackoff());
    this.observer = observer;
    this.lingerNanos = settings.linger().toNanos();
    this.attemptTimeoutNanos = settings.attemptTimeout().toNanos();
    this.minIntervalNanos = Math.max(0, settings.minInterval().toNanos());
    this.keptTotalLimit = KEPT_TOTAL_LIMIT;
  }

  /** Takes {@code bytes} of the kept-records budget; false (nothing taken) when they do not fit. */
  boolean reserveKept(long bytes) {
    long now;
    do {
      now = keptBytes.get();
      if (now + bytes > keptTotalLimit) {
        return false;
      }
    } while (!keptBytes.compareAndSet(now, now + bytes));
    return true;
  }

  /** Gives back {@code bytes} taken by {@link #reserveKept}. */
  void releaseKept(long bytes) {
    keptBytes.addAndGet(-bytes);
  }

  /** Compressed bytes kept in memory by all lanes now. */
  long keptBytes() {
    return keptBytes.get();
  }
}
