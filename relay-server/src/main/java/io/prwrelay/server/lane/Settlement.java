package io.prwrelay.server.lane;

import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.protocol.WrittenCounts;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What a lane does with the fragments of a send from memory once it is answered (sync mode, a
 * direct send in queue mode, or a {@link Delegate}'s failure handed to the lane): every decision in
 * one method, {@link #settle}; and the answers to fragments that go no further (past their
 * deadline, or no request body).
 *
 * <pre>
 *   answer                          the lane                 each fragment of the send
 *   415 to PRW 2.0 (auto mode)      falls back to PRW 1.0    sent again first, converted
 *   2xx                             HEALTHY                  DELIVERED
 *   4xx, several fragments          unchanged                sent again first, in halves (Bisection)
 *   4xx, one fragment, or a         REJECTING at the 3rd     REJECTED
 *   tenant limit (series, metadata) in a row, else unchanged
 *   429                             THROTTLED                sent again first once, when its
 *                                                            Retry-After fits well inside the
 *                                                            deadline; else THROTTLED (429)
 *   5xx, no answer                  BACKING_OFF              sent again first after the backoff,
 *                                                            at most MAX_RETRIES times and when
 *                                                            the backoff fits well inside the
 *                                                            deadline; else UNAVAILABLE (the status)
 *   429, 5xx, no answer, closing    unchanged                UNAVAILABLE (503, shutting down)
 * </pre>
 *
 * "Fits well inside": takes at most a quarter of the time left until the request's deadline.
 * Touched only on the lane's loop.
 */
final class Settlement {
  /**
   * Retries of a fragment inside its request after 5xx, connect errors or timeouts: enough to ride
   * out a blip, few enough that an outage is reported to the sender within a few hundred
   * milliseconds.
   */
  static final int MAX_RETRIES = 2;

  private final Lane lane;
  private final LaneContext ctx;
  private final Pending pending;
  private final Health health;

  Settlement(Lane lane, LaneContext ctx, Pending pending, Health health) {
    this.lane = lane;
    this.ctx = ctx;
    this.pending = pending;
    this.health = health;
  }

  /** Answers, retries or requeues the fragments of a send answered {@code o}, at {@code now}. */
  void settle(List<Fragment> batch, Protocol sent, AttemptOutcome o, long now) {
    if (!lane.closed() && ctx.protocol.fallsBackOn(sent, o)) {
      // The downstream takes only PRW 1.0: the same fragments go again, converted.
      ctx.protocol.fallBack(o);
      for (int i = batch.size() - 1; i >= 0; i--) {
        pending.addFirst(batch.get(i));
      }
      lane.pump(now);
      return;
    }
    // The downstream's own written counts belong to a fragment only when it travelled alone.
    WrittenCounts written = batch.size() == 1 ? o.written() : null;
    if (lane.closed() && !o.success() && o.retriable()) {
      shuttingDown(batch);
      return;
    }
    if (Outgoing.rejectedAsAWhole(o, batch.size())) {
      resendHalves(batch);
    } else if (o.success() || !o.retriable()) {
      if (!o.success()) {
        // Before the answers: a sender told of the rejection finds the lane's state counting it.
        health.on(Health.Event.REJECTED, o.describe(), -1, now);
      }
      ctx.answer(batch, o);
    } else if (o.status() == 429) {
      long retryAfter = o.retryAfterMillis();
      // Throttled also without Retry-After (delay 0: new fragments are still sent).
      long delay = health.on(Health.Event.THROTTLED, o.describe(), retryAfter, now);
      for (int i = batch.size() - 1; i >= 0; i--) {
        Fragment f = batch.get(i);
        if (retryAfter >= 0 && f.attempts() == 1 && fitsWellInside(delay, f, now)) {
          pending.addFirst(f);
        } else {
          lane.finish(
              f, FragmentOutcome.throttled(o.describe(), retryAfter, f.attempts(), written));
        }
      }
    } else {
      long delay = health.on(Health.Event.FAILED, o.describe(), o.retryAfterMillis(), now);
      long retryAfter = TimeUnit.NANOSECONDS.toMillis(delay) + 1;
      for (int i = batch.size() - 1; i >= 0; i--) {
        Fragment f = batch.get(i);
        if (f.attempts() <= MAX_RETRIES && fitsWellInside(delay, f, now)) {
          pending.addFirst(f);
        } else {
          lane.finish(
              f,
              FragmentOutcome.failed(o.status(), o.describe(), retryAfter, f.attempts(), written));
        }
      }
    }
    lane.pump(now);
  }

  /**
   * A send of several fragments was rejected as a whole (a non-retriable 4xx): one sender's bad
   * series may have failed the others'. Its two halves go again ahead of what waits, each as a
   * request of its own ({@link Bisection}); fragments that arrive meanwhile wait behind them and
   * are never merged with them. A closed lane cannot send again: its fragments get 503, for their
   * senders to retry.
   */
  private void resendHalves(List<Fragment> batch) {
    if (lane.closed()) {
      shuttingDown(batch);
      return;
    }
    Bisection.halve(batch);
    for (int i = batch.size() - 1; i >= 0; i--) {
      pending.addFirst(batch.get(i));
    }
  }

  /** Answers every waiting fragment whose request deadline has passed (sync mode). */
  void expire(long now, int inFlight) {
    List<Fragment> late = pending.expire(now);
    for (int i = 0; i < late.size(); i++) {
      Fragment f = late.get(i);
      lane.finish(
          f,
          FragmentOutcome.pastDeadline(
              inFlight,
              health.state() == Lane.State.HEALTHY ? null : health.reason(),
              health.retryAfterMillis(now),
              f.attempts()));
    }
  }

  /** Answers the fragments of a send whose request body could not be built ({@code e}). */
  void cannotCompress(List<Fragment> batch, Throwable e) {
    for (int j = 0; j < batch.size(); j++) {
      Fragment f = batch.get(j);
      lane.finish(f, FragmentOutcome.cannotCompress(e, f.attempts()));
    }
  }

  private void shuttingDown(List<Fragment> batch) {
    for (int j = 0; j < batch.size(); j++) {
      Fragment f = batch.get(j);
      lane.finish(f, FragmentOutcome.shuttingDown(f.attempts()));
    }
  }

  /** A retry after {@code delay} fits when it takes at most a quarter of the time left. */
  private static boolean fitsWellInside(long delay, Fragment f, long now) {
    return delay <= (f.deadlineNanos() - now) / 4;
  }
}
