package io.prwrelay.server.http;

import io.prwrelay.core.codec.MemoryGrant;

/**
 * The {@link MemoryGrant} of one write request: grows the request's {@link
 * InflightBudget.Reservation} to its compressed body plus the decompressed size the decoder asks
 * for, before the decoder allocates it. Remembers why it refused, for the answer. One per event
 * loop, {@link #reset} for each request; not thread-safe.
 */
final class RequestGrant implements MemoryGrant {
  private InflightBudget budget;
  private InflightBudget.Reservation reservation;
  private long base;
  private InflightBudget.Refusal refusal;
  private long refused;

  /**
   * Prepares the grant for a request.
   *
   * @param reservation the request's reservation, holding its compressed body of {@code base} bytes
   */
  RequestGrant reset(InflightBudget budget, InflightBudget.Reservation reservation, long base) {
    this.budget = budget;
    this.reservation = reservation;
    this.base = base;
    this.refusal = null;
    this.refused = 0;
    return this;
  }

  @Override
  public boolean reserve(long bytes) {
    long total = base + bytes;
    if (!budget.couldEverFit(total)) {
      refused = total;
      return false;
    }
    refusal = reservation.growTo(total);
    if (refusal != null) {
      refused = total;
      return false;
    }
    return true;
  }

  /**
   * The answer to a request whose decompressed size the budget refused: 413 when the request could
   * never fit in the budget (or in one client's share of it), else 503 as for a body refused before
   * it was read.
   */
  Answer refusedAnswer() {
    if (refusal == null) {
      return Answer.of(
          413,
          "the request takes "
              + refused
              + " bytes compressed and decompressed, more than one client may hold ("
              + budget.describePerClientLimit()
              + ")");
    }
    return budget.refused(refusal, false);
  }

  /**
   * The {@code relay_inflight_rejected_total} reason of the refusal: {@code total} or {@code
   * client} (the budget or the client's share is in use now), {@code too_large} (never fits).
   */
  String reason() {
    return refusal == null ? "too_large" : refusal.tag;
  }

  /** Forgets the request, so that nothing of it stays reachable from the loop. */
  void clear() {
    reservation = null;
    budget = null;
  }
}
