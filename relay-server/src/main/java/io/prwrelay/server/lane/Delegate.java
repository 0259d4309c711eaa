package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.FutureListener;
import io.netty.util.concurrent.ScheduledFuture;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.protocol.Protocol;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Sync mode: a healthy tenant whose lane lives on another event loop, as seen from this one. Its
 * lane allowed this loop to send the tenant's large PRW 1.0 fragments routed here itself ({@link
 * Delegations}; the protocol is drawn in the package documentation), so that they do not wait for
 * the lane's loop to take them and for this loop to take their outcome back. It keeps what waits in
 * a {@link Pending} and builds its requests with {@link RequestBody}, as a lane does.
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
final class Delegate {
  private final String tenant;
  private final LaneContext ctx;
  private final EventLoop loop;
  private final SendSlots slots;
  private final Lanes lanes;
  private final int shard;
  private final Pending pending = new Pending();
  private int inFlight;
  private ScheduledFuture<?> linger;
  private boolean withdrawn;

  /** The last send from here that the lane heard of was rejected ({@link #outcome}). */
  private boolean toldRejection;

  private final Runnable onLinger = this::onLinger;

  /**
   * @param shard index of {@code loop} among the lanes' loops
   */
  Delegate(
      String tenant, LaneContext ctx, EventLoop loop, SendSlots slots, Lanes lanes, int shard) {
    this.tenant = tenant;
    this.ctx = ctx;
    this.loop = loop;
    this.slots = slots;
    this.lanes = lanes;
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
      lanes.toLane(pending.takeAll(), shard);
    }
  }

  /** Shutdown: what waits here is answered 503; sends in flight end on their own. */
  void close() {
    withdrawn = true;
    cancelLinger();
    for (Fragment f : pending.takeAll()) {
      lanes.finish(f, FragmentOutcome.shuttingDown());
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
      lanes.toLane(pending.takeAll(), shard);
      return;
    }
    send();
  }

  private void send() {
    cancelLinger();
    long now = now();
    Outgoing batch = new Outgoing(pending.size(), now);
    pending.takeJudgedAlike(batch);
    if (!pending.isEmpty()) {
      // Judged otherwise downstream (HaLabels): they go with the next send, at the latest when the
      // linger ends.
      linger = loop.schedule(onLinger, ctx.lingerNanos, TimeUnit.NANOSECONDS);
    }
    long left = Pending.timeLeft(batch, now);
    try {
      batch.body = left > 0 ? RequestBody.of(batch, ctx.alloc) : null;
    } catch (RuntimeException | Error e) {
      batch.body = null;
    }
    if (batch.body == null) {
      lanes.toLane(batch, shard); // the lane answers what is past its deadline, or sends it
      return;
    }
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).attempts++;
    }
    inFlight++;
    slots.take();
    ctx.sender
        .send(
            loop,
            tenant,
            Protocol.V1,
            Fragment.retryAttempt(batch),
            batch.body,
            Math.min(ctx.attemptTimeoutNanos, left))
        .addListener(batch);
  }

  /**
   * One downstream request of the delegate: its fragments, in order, and the listener of its
   * answer. A list and a listener per send showed in the allocation profile; this is both.
   */
  private final class Outgoing extends ArrayList<Fragment>
      implements FutureListener<AttemptOutcome> {
    private final long started;

    /** The request body, released when the answer comes. */
    ByteBuf body;

    Outgoing(int capacity, long started) {
      super(capacity);
      this.started = started;
    }

    @Override
    public void operationComplete(Future<AttemptOutcome> result) {
      body.release();
      body = null;
      inFlight--;
      try {
        outcome(this, result.getNow(), started);
      } finally {
        slots.release();
      }
      flush();
    }
  }

  private void outcome(List<Fragment> batch, AttemptOutcome o, long started) {
    ctx.observer.attempt(tenant, batch.size(), o, now() - started);
    if (!o.success() && !o.retriable() && batch.size() > 1 && !o.overTenantLimit()) {
      // Rejected as a whole: the lane sends it again in halves (Bisection), within its own bounds
      // and ahead of what waits there. The tenant is not failing, so this loop keeps sending.
      lanes.failedRemotely(batch, o, List.of(), -1);
      return;
    }
    if (o.success() || !o.retriable()) {
      lanes.answer(batch, o);
      if (!o.success() || toldRejection) {
        // The lane counts rejections in a row: it hears each one of the sends from here, and the
        // first 2xx after one (a 2xx after a 2xx changes nothing there, and is not sent).
        toldRejection = !o.success();
        lanes.answeredRemotely(tenant, o);
      }
      return;
    }
    // The lane decides from here on: this loop stops sending for the tenant until the lane, healthy
    // again, allows it anew, and what waits here goes to the lane with the failed batch. A send
    // that
    // fails after this delegate ended does not tell the lane to allow this loop again: by then the
    // lane may have allowed a new delegate here.
    boolean ending = !withdrawn;
    if (ending) {
      withdrawn = true;
      cancelLinger();
      lanes.dropDelegate(shard, tenant, this);
    }
    lanes.failedRemotely(batch, o, pending.takeAll(), ending ? shard : -1);
  }
}
