package io.prwrelay.server.lane;

import io.prwrelay.server.downstream.AttemptOutcome;

/** Told what lanes do; implemented by metrics and logging. Called on the lane's event loop. */
public interface LaneObserver {
  /** A downstream attempt carrying {@code fragments} fragments of {@code tenant} ended. */
  default void attempt(String tenant, int fragments, AttemptOutcome outcome, long nanos) {}

  /**
   * Queued records of {@code tenant} reached their end in queue mode: delivered ({@code outcome}
   * 2xx) or dropped because the downstream rejected them ({@code outcome} a non-retriable 4xx).
   */
  default void drained(String tenant, long records, long series, AttemptOutcome outcome) {}

  /** A fragment reached its outcome. */
  default void finished(Fragment fragment, FragmentOutcome outcome) {}

  /**
   * The lane of {@code tenant} changed state: started backing off ({@code state} not HEALTHY, with
   * the reason and the delay) or recovered ({@code state} HEALTHY).
   */
  default void stateChanged(String tenant, Lane.State state, String reason, long delayNanos) {}

  /** A lane was created ({@code +1}) or forgotten ({@code -1}). */
  default void lanes(int delta) {}

  LaneObserver NONE = new LaneObserver() {};
}
