package io.prwrelay.server.lane;

/**
 * One tenant's part of a sender request and how it ended, as {@link SenderRequest} reports it: a
 * finished {@link Fragment}, which keeps its counts and its outcome.
 */
public interface BatchResult {
  String tenant();

  /** Series of the tenant's batch. */
  int series();

  /** Samples of the tenant's batch, counted from tags. */
  long samples();

  /** Exemplars of the tenant's batch, counted from tags. */
  long exemplars();

  /** Native histogram samples of the tenant's batch, counted from tags. */
  long histograms();

  /** How the batch ended. */
  FragmentOutcome outcome();
}
