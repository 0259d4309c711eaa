package io.prwrelay.server.downstream;

import java.util.List;

/**
 * Told about every downstream attempt, retry and final outcome; implemented by metrics and the
 * failure log. Every method does nothing unless overridden.
 */
public interface DeliveryObserver {
  /** An attempt ended after {@code nanos}. */
  default void attempt(TenantSend send, AttemptOutcome outcome, long nanos) {}

  /** A retry of {@code send} was scheduled after {@code delayNanos}. */
  default void retry(TenantSend send, AttemptOutcome outcome, long delayNanos) {}

  /** {@code send} reached its final outcome (see {@link TenantSend#last()}). */
  default void finished(TenantSend send) {}

  /** Observer that ignores everything. */
  DeliveryObserver NONE = new DeliveryObserver() {};

  /** An observer that tells each of {@code observers}, in this order. */
  static DeliveryObserver all(DeliveryObserver... observers) {
    List<DeliveryObserver> list = List.of(observers);
    return new DeliveryObserver() {
      @Override
      public void attempt(TenantSend send, AttemptOutcome outcome, long nanos) {
        list.forEach(o -> o.attempt(send, outcome, nanos));
      }

      @Override
      public void retry(TenantSend send, AttemptOutcome outcome, long delayNanos) {
        list.forEach(o -> o.retry(send, outcome, delayNanos));
      }

      @Override
      public void finished(TenantSend send) {
        list.forEach(o -> o.finished(send));
      }
    };
  }
}
