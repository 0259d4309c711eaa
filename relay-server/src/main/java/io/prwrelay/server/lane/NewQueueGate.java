package io.prwrelay.server.lane;

import io.prwrelay.server.config.DeliveryConfig;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Queue mode: how many tenant queues the lanes may make on disk, so that one sender's request
 * carrying thousands of tenants never queues thousands of directories, files and flushes in front
 * of other senders' appends. A queue is made by the first append of a tenant whose queue was not
 * {@linkplain io.prwrelay.server.queue.TenantQueue#created() created} since the store opened;
 * tenants whose queues were are never counted.
 *
 * <p>Two bounds: at most {@code perRequest} of one sender request's tenants (counted on the {@link
 * SenderRequest}, across the loops its fragments go to), and at most {@code perSecond} over all
 * requests, a token bucket holding at most one second's worth, so a burst of {@code perSecond}
 * passes at once and then {@code perSecond} a second. A fragment past either is answered 503 with
 * {@code Retry-After} naming the bound ({@link FragmentOutcome#newQueueRefused}); the same request
 * sent again makes the next ones (the ledger skips the tenants already queued).
 *
 * <p>State: the tokens left and when they were counted, behind this object's lock, taken only for a
 * tenant without a queue. Bound: none per tenant; two fields.
 */
public final class NewQueueGate {
  /** A gate that lets every new queue through. */
  static final NewQueueGate UNBOUNDED =
      new NewQueueGate(Integer.MAX_VALUE, Integer.MAX_VALUE, null);

  private static final long SECOND_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final int perRequest;
  private final int perSecond;
  private final LongSupplier nanoTime;

  /**
   * Tokens in nanoseconds' worth of the rate: {@code perSecond} tokens are {@link #SECOND_NANOS}.
   */
  private long tokenNanos;

  private long countedAt;

  /**
   * @param perRequest new queues one sender request may make ({@code
   *     relay.delivery.queue.max-new-tenants-per-request})
   * @param perSecond new queues all requests may make a second ({@code
   *     relay.delivery.queue.max-new-tenants-per-second})
   * @param nanoTime the clock of the rate
   */
  NewQueueGate(int perRequest, int perSecond, LongSupplier nanoTime) {
    if (perRequest < 1 || perSecond < 1) {
      throw new IllegalArgumentException(
          "bounds must be positive: " + perRequest + " per request, " + perSecond + " a second");
    }
    this.perRequest = perRequest;
    this.perSecond = perSecond;
    this.nanoTime = nanoTime;
    if (nanoTime != null) {
      this.countedAt = nanoTime.getAsLong();
      this.tokenNanos = SECOND_NANOS;
    }
  }

  /** A gate with these bounds on the system clock. */
  static NewQueueGate of(int perRequest, int perSecond) {
    return new NewQueueGate(perRequest, perSecond, System::nanoTime);
  }

  /**
   * Why a fragment may not make its tenant's queue now.
   *
   * @param bound the bound, as the metrics name it: {@code new-tenants-per-request}, {@code
   *     new-tenants-per-second}
   * @param outcome what the fragment is answered (503, Retry-After)
   */
  record Refusal(String bound, FragmentOutcome outcome) {}

  /**
   * Lets {@code f} make its tenant's queue, or says why not. A request's count is taken first, so a
   * fragment refused by the rate still counts against its request.
   *
   * @return {@code null} when it may
   */
  Refusal admit(Fragment f) {
    if (this == UNBOUNDED) {
      return null;
    }
    SenderRequest request = f.request();
    if (request != null && !request.takeNewQueue(perRequest)) {
      return new Refusal(
          "new-tenants-per-request",
          FragmentOutcome.newQueueRefused(
              f.tenant(),
              "the request carries more than " + perRequest + " tenants that have no queue yet",
              DeliveryConfig.QUEUE_MAX_NEW_TENANTS_PER_REQUEST.setTo(perRequest),
              1000));
    }
    long wait = takeToken();
    if (wait > 0) {
      return new Refusal(
          "new-tenants-per-second",
          FragmentOutcome.newQueueRefused(
              f.tenant(),
              perSecond + " tenant queues were made in the last second",
              DeliveryConfig.QUEUE_MAX_NEW_TENANTS_PER_SECOND.setTo(perSecond),
              Math.max(1000, TimeUnit.NANOSECONDS.toMillis(wait))));
    }
    return null;
  }

  /** Takes one token: 0 when taken, else nanoseconds until one is there. */
  private synchronized long takeToken() {
    long now = nanoTime.getAsLong();
    long cost = SECOND_NANOS / perSecond;
    long elapsed = Math.max(0, now - countedAt);
    countedAt = now;
    tokenNanos = Math.min(SECOND_NANOS, tokenNanos + elapsed);
    if (tokenNanos < cost) {
      return cost - tokenNanos;
    }
    tokenNanos -= cost;
    return 0;
  }
}
