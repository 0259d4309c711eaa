package io.prwrelay.server.lane;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.protocol.Protocol;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Sync mode: a healthy tenant whose lane lives on another event loop, as seen from this one. Its
 * lane allowed this loop to send the tenant's large PRW 1.0 fragments routed here itself ({@link
 * Delegations}; the protocol is drawn in the package documentation), so that they do not wait for
 * the lane's loop to take them and for this loop to take their outcome back. It keeps what waits in
 * a {@link Pending} and sends its requests as {@link Outgoing}s, as a lane does; its messages to
 * the lane go through {@link DelegationMessages}.
 *
 * <p>Like a lane, it has at most {@link LaneSettings#maxConcurrentSends()} requests in flight and
 * coalesces: a fragment that arrives while one of its sends is in flight waits, with the others
 * that arrive, for the first send to come back or for {@code linger}, whichever comes first, and
 * they go as one request (joined snappy blocks) of up to {@code batchMaxBytes}, each request made
 * only of fragments the downstream judges alike ({@link Pending#takeJudgedAlike}). A fragment it
 * cannot take (every send slot of the tenant or of the loop busy) goes to the lane. A 2xx or a
 * non-retriable 4xx answers a send's fragments here; any other outcome hands them to the lane,
 * which decides as if it had sent them. So does a non-retriable 4xx to a send of several fragments:
 * the lane sends them again in halves until only the bad ones are rejected ({@link Bisection});
 * splitting here would need a second queue that keeps pieces apart, for a rare event. A rejection
 * answered here is told to the lane, and so is the first 2xx after one: the lane counts the
 * tenant's rejections in a row ({@link Health}). Touched only on its loop.
 */
final class Delegate implements Outgoing.Owner {
  private final String tenant;
  private final LaneContext ctx;
  private final EventLoop loop;
  private final SendSlots slots;
  private final DelegationMessages messages;
  private final int shard;
  private final Pending pending = new Pending();
  private int inFlight;
  private ScheduledFuture<?> linger;
  private boolean withdrawn;

  /** The last send from here that the lane heard of was rejected ({@link #answered}). */
  private boolean toldRejection;

  private final Runnable onLinger = this::onLinger;

  /**
   * @param shard index of {@code loop} among the lanes' loops
   */
  Delegate(
      String tenant,
      LaneContext ctx,
      EventLoop loop,
      SendSlots slots,
      DelegationMessages messages,
      int shard) {
    this.tenant = tenant;
    this.ctx = ctx;
    this.loop = loop;
    this.slots = slots;
    this.messages = messages;
    this.shard = shard;
  }

  /**
   * Takes a large compressed PRW 1.0 fragment of the tenant to send from here; false when it goes
   * to the lane instead.
   */
  boolean take(Fragment f) {
    if (withdrawn || inFlight >= ctx.settings.maxConcurrentSends()) {
      return false;
    }
    if (inFlight == 0) {
      if (!slotFree() || f.deadlineNanos() - now() <= 0) {
        return false;
      }
      pending.add(f);
      send();
      return true;
    }
    pending.add(f);
    if (pending.bytes() >= ctx.settings.batchMaxBytes()) {
      flush();
    } else if (linger == null) {
      linger = loop.schedule(onLinger, ctx.lingerNanos, TimeUnit.NANOSECONDS);
    }
    return true;
  }

  /** The lane backs off or was forgotten: what waits here goes to it, and nothing more is taken. */
  void withdraw() {
    withdrawn = true;
    cancelLinger();
    if (!pending.isEmpty()) {
      messages.toLane(pending.takeAll(), shard);
    }
  }

  /** Shutdown: what waits here is answered 503; sends in flight end on their own. */
  void close() {
    withdrawn = true;
    cancelLinger();
    for (Fragment f : pending.takeAll()) {
      ctx.finish(f, FragmentOutcome.shuttingDown());
    }
  }

  /**
   * A connection of this loop may carry one of the tenant's sends: the loop keeps {@code
   * maxConcurrentSends} of its connections for its own lanes, so that a slow tenant's sends from
   * other loops never take a loop's last connections.
   */
  private boolean slotFree() {
    return slots.freeBeyond(ctx.settings.maxConcurrentSends());
  }

  private long now() {
    return loop.ticker().nanoTime();
  }

  private void onLinger() {
    linger = null;
    flush();
  }

  private void cancelLinger() {
    if (linger != null) {
      linger.cancel(false);
      linger = null;
    }
  }

  /** Sends what waits, or hands it to the lane when no send may start now. */
  private void flush() {
    if (pending.isEmpty()) {
      return;
    }
    if (withdrawn || inFlight >= ctx.settings.maxConcurrentSends() || !slotFree()) {
      cancelLinger();
      messages.toLane(pending.takeAll(), shard);
      return;
    }
    send();
  }

  private void send() {
    cancelLinger();
    long now = now();
    // Only proven, healthy lanes delegate: never an unproven lane's send.
    Outgoing batch = new Outgoing(pending.size(), Protocol.V1, now, this, slots, false);
    pending.takeJudgedAlike(batch);
    if (!pending.isEmpty()) {
      // Judged otherwise downstream (HaLabels): they go with the next send, at the latest when the
      // linger ends.
      linger = loop.schedule(onLinger, ctx.lingerNanos, TimeUnit.NANOSECONDS);
    }
    long left = Pending.timeLeft(batch, now);
    boolean built = false;
    if (left > 0) {
      try {
        batch.build(ctx);
        built = true;
      } catch (RuntimeException | Error e) {
        // Memory ran out for the body: the lane answers the fragments, or sends them.
      }
    }
    if (!built) {
      messages.toLane(batch, shard); // the lane answers what is past its deadline, or sends it
      return;
    }
    inFlight++;
    batch.send(ctx, loop, tenant, Math.min(ctx.attemptTimeoutNanos, left));
  }

  @Override
  public void answered(Outgoing batch, AttemptOutcome o) {
    inFlight--;
    ctx.observer.attempt(tenant, batch.size(), o, now() - batch.started);
    if (Outgoing.rejectedAsAWhole(o, batch.size())) {
      // Rejected as a whole: the lane sends it again in halves (Bisection), within its own bounds
      // and ahead of what waits there. The tenant is not failing, so this loop keeps sending.
      messages.failedRemotely(batch, o, List.of(), -1);
      return;
    }
    if (o.success() || !o.retriable()) {
      ctx.answer(batch, o);
      if (!o.success() || toldRejection) {
        // The lane counts rejections in a row: it hears each one of the sends from here, and the
        // first 2xx after one (a 2xx after a 2xx changes nothing there, and is not sent).
        toldRejection = !o.success();
        messages.answeredRemotely(tenant, o);
      }
      return;
    }
    // The lane decides from here on: this loop stops sending for the tenant until the lane, healthy
    // again, allows it anew, and what waits here goes to the lane with the failed batch. A send
    // that fails after this delegate ended does not tell the lane to allow this loop again: by then
    // the lane may have allowed a new delegate here.
    boolean ending = !withdrawn;
    if (ending) {
      withdrawn = true;
      cancelLinger();
      messages.dropDelegate(shard, tenant, this);
    }
    messages.failedRemotely(batch, o, pending.takeAll(), ending ? shard : -1);
  }

  /** Once the answered send's connection is free: what waited for it goes now. */
  @Override
  public void connectionFreed() {
    flush();
  }
}
