package io.prwrelay.server.downstream;

/** Told about every downstream attempt and retry; implemented by metrics and logging. */
public interface DeliveryObserver {
  /** An attempt ended. */
  void attempt(TenantSend send, AttemptOutcome outcome, long nanos);

  /** A retry of {@code send} was scheduled after {@code delayNanos}. */
  void retry(TenantSend send, AttemptOutcome outcome, long delayNanos);

  /** {@code send} reached its final outcome (see {@link TenantSend#last()}). */
  void finished(TenantSend send);

  /** Observer that ignores everything. */
  DeliveryObserver NONE =
      new DeliveryObserver() {
        @Override
        public void attempt(TenantSend send, AttemptOutcome outcome, long nanos) {}

        @Override
        public void retry(TenantSend send, AttemptOutcome outcome, long delayNanos) {}

        @Override
        public void finished(TenantSend send) {}
      };
}
