package io.prwrelay.server.write;

import io.prwrelay.core.codec.MemoryGrant;

/**
 * The {@link MemoryGrant}s of one write request: each grows the request's {@link
 * InflightBudget.Reservation} before the memory it stands for is allocated, to the compressed body
 * plus three parts, each part's latest ask replacing its previous one:
 *
 * <ul>
 *   <li>{@code decompressed}, this grant itself ({@link #reserve}): the size the decoder asks for;
 *   <li>{@code output} ({@link #output()}): the tenant batches routing or converting the request
 *       builds, sized before they are written (their running total);
 *   <li>{@code scratch} ({@link #scratch()}): what the event loop's scratch arrays grow beyond the
 *       bytes the loop keeps between requests ({@link io.prwrelay.core.wire.ScratchMemory}).
 * </ul>
 *
 * A request that could never fit in one client's share of the budget is refused for good (413), one
 * that does not fit now asked to retry (503). Remembers why it refused, for the answer. One per
 * event loop, {@link #reset} for each request; not thread-safe.
 */
final class RequestGrant implements MemoryGrant {
  private InflightBudget budget;
  private InflightBudget.Reservation reservation;
  private long base;
  private long decompressed;
  private long output;
  private long scratch;
  private InflightBudget.Refusal refusal;
  private long refused;
  private boolean refusedRouting;

  private final MemoryGrant outputGrant = bytes -> ask(decompressed, bytes, scratch);
  private final MemoryGrant scratchGrant = bytes -> ask(decompressed, output, bytes);

  /**
   * Prepares the grant for a request.
   *
   * @param reservation the request's reservation, holding its compressed body of {@code base} bytes
   */
  RequestGrant reset(InflightBudget budget, InflightBudget.Reservation reservation, long base) {
    this.budget = budget;
    this.reservation = reservation;
    this.base = base;
    this.decompressed = 0;
    this.output = 0;
    this.scratch = 0;
    this.refusal = null;
    this.refused = 0;
    this.refusedRouting = false;
    return this;
  }

  /** Asks for {@code bytes} of decompressed request. */
  @Override
  public boolean reserve(long bytes) {
    return ask(bytes, output, scratch);
  }

  /** The grant of the tenant batches built of the request: their total so far. */
  MemoryGrant output() {
    return outputGrant;
  }

  /** The grant of the loop's scratch arrays beyond what it keeps between requests. */
  MemoryGrant scratch() {
    return scratchGrant;
  }

  /** Bytes of the request the grants have asked for and been given, the body included. */
  long granted() {
    return base + decompressed + output + scratch;
  }

  /**
   * Asks for the parts to be {@code decompressed}, {@code output} and {@code scratch} bytes.
   *
   * @return whether the reservation holds them now; when not, nothing changed but the refusal
   */
  private boolean ask(long decompressed, long output, long scratch) {
    long total = base + decompressed + output + scratch;
    if (!budget.couldEverFit(total)) {
      refuse(null, total, output + scratch > 0);
      return false;
    }
    InflightBudget.Refusal r = reservation.growTo(total);
    if (r != null) {
      refuse(r, total, output + scratch > 0);
      return false;
    }
    this.decompressed = decompressed;
    this.output = output;
    this.scratch = scratch;
    return true;
  }

  private void refuse(InflightBudget.Refusal r, long total, boolean routing) {
    refusal = r;
    refused = total;
    refusedRouting = routing;
  }

  /**
   * The answer to a request whose memory the budget refused: 413 when the request could never fit
   * in the budget (or in one client's share of it), else 503 as for a body refused before it was
   * read.
   */
  Answer refusedAnswer() {
    if (refusal == null) {
      return Answer.of(
          413,
          "the request takes "
              + refused
              + (refusedRouting
                  ? " bytes compressed, decompressed and rebuilt as tenant requests"
                  : " bytes compressed and decompressed")
              + ", more than one client may hold ("
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
