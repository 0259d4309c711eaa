package io.prwrelay.server.lane;

import io.prwrelay.server.downstream.AttemptOutcome;

/**
 * Told what lanes do; implemented by metrics and the lane log. Called on the lane's event loop;
 * every method does nothing unless overridden.
 */
public interface LaneObserver {
  /** A downstream attempt carrying {@code fragments} fragments (or queued records) ended. */
  default void attempt(String tenant, int fragments, AttemptOutcome outcome, long nanos) {}

  /** A fragment reached its outcome. */
  default void finished(Fragment fragment, FragmentOutcome outcome) {}

  /**
   * A downstream request went out carrying {@code fragments} fragments (or queued records) of a
   * merged request the downstream had rejected as a whole, sent again in halves ({@link
   * Bisection}).
   */
  default void splitSend(String tenant, int fragments) {}

  /**
   * Queued records of {@code tenant} reached their end in queue mode: delivered ({@code outcome}
   * 2xx) or dropped because the downstream rejected them ({@code outcome} a non-retriable 4xx).
   */
  default void drained(String tenant, long records, long series, AttemptOutcome outcome) {}

  /**
   * Queue mode: the downstream answered 429 to a send of {@code series} series of {@code tenant}
   * (queued records, or a direct send that went to the queue); they stay queued and go again. Each
   * such answer counts its series, as a sync-mode 429 counts those of the fragments it answers
   * ({@link #finished} with {@link FragmentOutcome.Kind#THROTTLED}), so that throttled series are
   * counted alike in both modes.
   */
  default void throttledQueued(String tenant, long series, AttemptOutcome outcome) {}

  /**
   * The lane of {@code tenant} started backing off or being throttled ({@code state} not HEALTHY,
   * because of {@code reason}, holding sends back for {@code delayNanos}: 0 after a 429 without
   * {@code Retry-After} in sync mode), or recovered ({@code state} HEALTHY) when a send succeeded.
   */
  default void stateChanged(String tenant, Lane.State state, String reason, long delayNanos) {}

  /**
   * A fragment of {@code series} series was refused a place in its tenant's queue (queue mode) and
   * answered 503, because of {@code bound}: {@code tenant-bytes}, {@code total-bytes} (a byte bound
   * of the queues, {@link io.prwrelay.server.queue.QueueFullException.Bound}), {@code
   * new-tenants-per-request} or {@code new-tenants-per-second} ({@link NewQueueGate}).
   */
  default void queueRefused(String tenant, String bound, long series) {}

  /** The lane of {@code tenant} was created. */
  default void laneCreated(String tenant) {}

  /** The lane of {@code tenant} was forgotten (idle, or evicted to make room). */
  default void laneForgotten(String tenant) {}

  /** An observer that ignores everything. */
  LaneObserver NONE = new LaneObserver() {};

  /** An observer that tells each of {@code observers}, in this order. */
  static LaneObserver all(LaneObserver... observers) {
    // Loops over an array: forEach with a capturing lambda allocates per call, and these
    // run once per fragment and per downstream attempt.
    LaneObserver[] list = observers.clone();
    return new LaneObserver() {
      @Override
      public void attempt(String tenant, int fragments, AttemptOutcome outcome, long nanos) {
        for (LaneObserver o : list) {
          o.attempt(tenant, fragments, outcome, nanos);
        }
      }

      @Override
      public void finished(Fragment fragment, FragmentOutcome outcome) {
        for (LaneObserver o : list) {
          o.finished(fragment, outcome);
        }
      }

      @Override
      public void splitSend(String tenant, int fragments) {
        for (LaneObserver o : list) {
          o.splitSend(tenant, fragments);
        }
      }

      @Override
      public void drained(String tenant, long records, long series, AttemptOutcome outcome) {
        for (LaneObserver o : list) {
          o.drained(tenant, records, series, outcome);
        }
      }

      @Override
      public void throttledQueued(String tenant, long series, AttemptOutcome outcome) {
        for (LaneObserver o : list) {
          o.throttledQueued(tenant, series, outcome);
        }
      }

      @Override
      public void stateChanged(String tenant, Lane.State state, String reason, long delayNanos) {
        for (LaneObserver o : list) {
          o.stateChanged(tenant, state, reason, delayNanos);
        }
      }

      @Override
      public void queueRefused(String tenant, String bound, long series) {
        for (LaneObserver o : list) {
          o.queueRefused(tenant, bound, series);
        }
      }

      @Override
      public void laneCreated(String tenant) {
        for (LaneObserver o : list) {
          o.laneCreated(tenant);
        }
      }

      @Override
      public void laneForgotten(String tenant) {
        for (LaneObserver o : list) {
          o.laneForgotten(tenant);
        }
      }
    };
  }
}
