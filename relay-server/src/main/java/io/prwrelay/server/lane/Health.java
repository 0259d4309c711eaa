package io.prwrelay.server.lane;

import io.prwrelay.server.downstream.RetryPolicy;
import io.prwrelay.server.lane.Lane.State;
import java.util.concurrent.TimeUnit;

/**
 * A lane's health: what its tenant's downstream said last, as a state machine with one transition
 * method ({@link #on}). The state says whether the lane holds new fragments back and for how long,
 * and whether it merges fragments (or queued records) into one request or sends them one by one.
 *
 * <pre>
 *   any state ── 2xx ──────────────────────────────────▶ HEALTHY
 *   any state ── 429 ──────────────────────────────────▶ THROTTLED     held back, one by one
 *   any state ── 5xx, no answer, queue not readable ───▶ BACKING_OFF   held back
 *   any state ── 3rd non-retriable 4xx in a row ───────▶ REJECTING     nothing held back
 * </pre>
 *
 * The next state depends on the event alone: a failure enters its state anew from any state (a new
 * reason, a new hold), so a throttled lane that fails backs off and a backing-off lane answered 429
 * is throttled; only a 2xx makes the lane healthy again. A rejection (a non-retriable 4xx that
 * rejects the batches of a send for good: not a merged send that goes again in halves) changes
 * nothing until {@value #REJECTING_AFTER} come in a row, with no other answer between them: then
 * the downstream answers but refuses everything the tenant sends (Cortex's and Mimir's per-tenant
 * series limit, a tenant whose every series is malformed), and the lane says so. REJECTING holds
 * nothing back and changes no sending (every batch is still tried: the next may be accepted); it is
 * entered once, and left by the next 2xx (HEALTHY) or failure. In detail:
 *
 * <pre>
 * event        next state    held back, sync mode        held back, queue mode     one by one
 * DELIVERED    HEALTHY, n=0  no                          no                        no
 * THROTTLED    THROTTLED     its Retry-After (or 0)      backoff(n+1), ≥ R-A       yes
 * FAILED       BACKING_OFF   backoff(n+1), ≥ R-A         backoff(n+1), ≥ R-A       sync kept, queue yes
 * READ_FAILED  BACKING_OFF   -                           backoff(n+1)              kept
 * UNREADABLE   unchanged     -                           unchanged                 yes
 * REJECTED     r+1 ≥ K:      none (a hold running ends)  none (a hold running      kept
 *              REJECTING,                                ends)
 *              else unchanged
 * </pre>
 *
 * ({@code n}: consecutive failures, kept by a sync-mode THROTTLED and by REJECTED; {@code r}:
 * consecutive rejections, reset by every other event but UNREADABLE; K: {@value #REJECTING_AFTER};
 * R-A: the answer's {@code Retry-After}; backoff: {@link RetryPolicy}). A hold running when the
 * lane starts rejecting can only be one whose failure was followed by {@value #REJECTING_AFTER}
 * answers of sends already out: the downstream answers again, so nothing waits for it. Why the
 * modes differ: in sync mode held-back fragments are answered at once (429 or 503), so a 429 holds
 * back only for as long as the downstream asked and the senders' own retries pace the tenant; in
 * queue mode nothing is answered from the state, the data waits on disk, so the lane itself must
 * wait before it reads again, and a 429 backs off like a failure. Sending one by one keeps merging
 * from making a throttled tenant's request larger than its burst (sync), and keeps a failing
 * tenant's retries from reading and merging a whole batch each time (queue).
 *
 * <p>Every transition into a state other than HEALTHY is reported ({@link
 * LaneObserver#stateChanged}) and runs {@code onUnhealthy} first (the lane takes back the loops it
 * let send for it, {@link Delegations}, so that every answer of a tenant that is not healthy comes
 * to its lane); the entry into REJECTING and the return to HEALTHY are reported once. Touched only
 * on the lane's loop; times are the loop's ticker.
 */
final class Health {
  /**
   * Rejections in a row, with no other answer between them, that make a lane REJECTING: one or two
   * can be a sender's bad batch (a sample out of order, too many labels), which bisection keeps to
   * itself while the other batches are accepted; three with none accepted between them are the
   * tenant's, whichever sender sends it, and a tenant sending a batch a scrape interval shows it
   * after three.
   */
  static final int REJECTING_AFTER = 3;

  /** What the downstream (or the queue) said; see the table of {@link Health}. */
  enum Event {
    /** A send was answered 2xx. */
    DELIVERED,
    /** A send was answered 429. */
    THROTTLED,
    /** A send was answered 5xx, or not at all (connect error, timeout). */
    FAILED,
    /** Queue mode: the tenant's queue could not be read. */
    READ_FAILED,
    /**
     * Queue mode: records read together could not be made into one request; they are read again one
     * at a time, so that only the bad one is dropped.
     */
    UNREADABLE,
    /**
     * A send was answered with a non-retriable 4xx that rejects its batches (or queued records) for
     * good: one alone, or several over a tenant limit ({@link
     * io.prwrelay.server.downstream.AttemptOutcome#overTenantLimit}); not a merged send that goes
     * again in halves ({@link Bisection}).
     */
    REJECTED
  }

  private final String tenant;
  private final boolean queueMode;
  private final RetryPolicy retryPolicy;
  private final LaneObserver observer;
  private final Runnable onUnhealthy;

  private State state = State.HEALTHY;
  private String reason = "";

  /** Ticker time until which a state other than HEALTHY holds new fragments (or reads) back. */
  private long untilNanos;

  /** Consecutive failures, for the backoff and a queue's {@code Retry-Attempt}. */
  private int failures;

  /** Consecutive rejections, with no other answer between them. */
  private int rejections;

  private boolean oneByOne;

  /**
   * @param queueMode whether the lane queues on disk (the holds of the two modes differ)
   * @param onUnhealthy run before each transition into a state other than HEALTHY
   */
  Health(
      String tenant,
      boolean queueMode,
      RetryPolicy retryPolicy,
      LaneObserver observer,
      Runnable onUnhealthy) {
    this.tenant = tenant;
    this.queueMode = queueMode;
    this.retryPolicy = retryPolicy;
    this.observer = observer;
    this.onUnhealthy = onUnhealthy;
  }

  /**
   * The one transition: moves the state machine on {@code event} at ticker time {@code now}.
   *
   * @param why the reason reported and told to held-back senders (the downstream's answer)
   * @param retryAfterMillis the downstream's {@code Retry-After}, or -1
   * @return how long the lane now holds back, in nanoseconds (0 for none)
   */
  long on(Event event, String why, long retryAfterMillis, long now) {
    switch (event) {
      case DELIVERED:
        failures = 0;
        rejections = 0;
        oneByOne = false;
        if (state != State.HEALTHY) {
          enter(State.HEALTHY, "", 0, now);
        }
        return 0;
      case THROTTLED:
        {
          rejections = 0;
          oneByOne = true;
          long delay;
          if (queueMode) {
            failures++;
            delay = retryPolicy.delayNanos(failures, retryAfterMillis);
          } else {
            delay = TimeUnit.MILLISECONDS.toNanos(Math.max(0, retryAfterMillis));
          }
          enter(State.THROTTLED, why, delay, now);
          return delay;
        }
      case FAILED:
      case READ_FAILED:
        {
          failures++;
          rejections = 0;
          if (queueMode && event == Event.FAILED) {
            oneByOne = true;
          }
          long delay =
              retryPolicy.delayNanos(failures, event == Event.FAILED ? retryAfterMillis : -1);
          enter(State.BACKING_OFF, why, delay, now);
          return delay;
        }
      case UNREADABLE:
        oneByOne = true;
        return 0;
      case REJECTED:
        rejections++;
        if (state != State.REJECTING && rejections >= REJECTING_AFTER) {
          enter(State.REJECTING, why, 0, now);
        }
        return 0;
      default:
        throw new IllegalArgumentException("no transition for " + event);
    }
  }

  private void enter(State next, String why, long delayNanos, long now) {
    boolean changed = next != state;
    if (next != State.HEALTHY) {
      onUnhealthy.run();
    }
    state = next;
    reason = why;
    untilNanos = now + delayNanos;
    if (changed || next != State.HEALTHY) {
      observer.stateChanged(tenant, next, why, delayNanos);
    }
  }

  State state() {
    return state;
  }

  /** Why the lane is not healthy ({@code ""} when it is). */
  String reason() {
    return reason;
  }

  /** True while the state holds new fragments (sync mode) or reads of the queue back. */
  boolean holdsBack(long now) {
    return state != State.HEALTHY && now - untilNanos < 0;
  }

  /** Ticker time the current hold ends (meaningful while {@link #holdsBack}). */
  long heldUntil() {
    return untilNanos;
  }

  /** The {@code Retry-After} for a sender while the lane holds back: the time left, else -1. */
  long retryAfterMillis(long now) {
    return holdsBack(now) ? TimeUnit.NANOSECONDS.toMillis(untilNanos - now) + 1 : -1;
  }

  /** The answer to a fragment offered while the state holds fragments back (sync mode). */
  FragmentOutcome heldBack(long now, int attempts) {
    return FragmentOutcome.heldBack(state, reason, retryAfterMillis(now), attempts);
  }

  /** Failures since the last send that succeeded (in sync mode, not counting 429s). */
  int failures() {
    return failures;
  }

  /** True until a send succeeds after a 429 (or, in queue mode, any failure): no merging. */
  boolean oneByOne() {
    return oneByOne;
  }
}
