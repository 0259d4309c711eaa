package io.prwrelay.server.lane;

import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.downstream.RetryPolicy;
import io.prwrelay.server.downstream.TenantSender;
import io.prwrelay.server.protocol.WrittenCounts;
import io.prwrelay.server.queue.TenantQueues;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * What every lane shares: settings, the sender, buffers, backoff policy and the observer, which
 * hears every fragment's outcome before its listener does ({@link #finish}).
 */
final class LaneContext {
  final LaneSettings settings;
  final TenantSender sender;
  final ByteBufAllocator alloc;
  final RetryPolicy retryPolicy;
  final LaneObserver observer;
  final long lingerNanos;
  final long attemptTimeoutNanos;

  /**
   * A downstream request answered within this, a quarter of the attempt timeout, proves its lane
   * until one takes longer or times out ({@link Lane#unproven()}, {@link SendSlots}): well above a
   * push's usual time, well below the timeout that ends a hung one.
   */
  final long slowSendNanos;

  /** The tenants' queues in queue mode, {@code null} in sync mode. */
  final TenantQueues store;

  /** Wall-clock milliseconds, kept with queued records for their age bound. */
  final LongSupplier wallMillis;

  /** Largest decompressed size of a merged queued batch. */
  final int maxDecompressedBytes;

  /**
   * Queue mode: how long a caught-up lane's fragment may wait for its direct delivery before it is
   * queued; 0 when every fragment is queued.
   */
  final long directNanos;

  /** Queue mode: how many tenant queues may be made on disk; unbounded in sync mode. */
  final NewQueueGate newQueues;

  /** The Remote Write version PRW 2.0 batches go downstream in. */
  final DownstreamProtocol protocol;

  /** How many new lanes each sender may cause; set once, before the first fragment. */
  volatile NewLaneBudget newLanes = NewLaneBudget.UNLIMITED;

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
    this.directNanos = queues == null ? 0 : Math.max(0, queues.directTimeout().toNanos());
    this.newQueues = queues == null ? NewQueueGate.UNBOUNDED : queues.newQueues();
    this.settings = settings;
    this.sender = sender;
    this.alloc = alloc;
    this.retryPolicy = new RetryPolicy(settings.initialBackoff(), settings.maxBackoff());
    this.observer = observer;
    this.lingerNanos = settings.linger().toNanos();
    this.attemptTimeoutNanos = settings.attemptTimeout().toNanos();
    this.slowSendNanos = attemptTimeoutNanos / 4;
  }

  /** Tells the observer a fragment's outcome, then the fragment's listener. */
  void finish(Fragment f, FragmentOutcome o) {
    observer.finished(f, o);
    f.complete(o);
  }

  /**
   * Answers every fragment of a send, from a lane or a {@link Delegate}, that came back 2xx
   * (delivered) or with a non-retriable 4xx (rejected).
   */
  void answer(List<Fragment> batch, AttemptOutcome o) {
    // The downstream's own written counts belong to a fragment only when it travelled alone.
    WrittenCounts written = batch.size() == 1 ? o.written() : null;
    for (int i = 0; i < batch.size(); i++) {
      Fragment f = batch.get(i);
      finish(f, FragmentOutcome.answered(o, f.attempts(), written));
    }
  }
}
