package io.prwrelay.server.lane;

import io.netty.channel.EventLoop;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.queue.TenantQueue;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * Every downstream send of one tenant goes through its lane, so that what the tenant's downstream
 * does changes only this lane and never another tenant's. A lane lives on one event loop and is
 * touched only there. It holds the fragments waiting to be sent ({@link Pending}), at most {@link
 * LaneSettings#maxConcurrentSends()} downstream requests in flight, and a {@link State} ({@link
 * Health}); the package documentation draws the states and what each does to a fragment.
 *
 * <p>The lane's story, in this class: a fragment is {@linkplain #offer offered}, and answered at
 * once when the state holds fragments back or the lane is full; the lane {@linkplain #pump pumps}
 * after the tasks already waiting on the loop, sending what waits as one request ({@link
 * Outgoing}), coalesced, when a connection is free and no linger holds it; each answer is settled
 * ({@link Settlement}): the fragments are delivered or rejected, sent again in halves ({@link
 * Bisection}), retried after a backoff that fits inside their request's deadline, or answered. In
 * sync mode other loops may send the tenant's large fragments ({@link Delegations}) and hand their
 * failures here ({@link #remoteFailed}); in queue mode the lane sends directly only while it is
 * caught up, and otherwise queues and drains ({@link DirectSpill}, {@link QueueDrain}). PRW 2.0
 * fragments are converted for a downstream that takes only PRW 1.0 just before they are sent
 * ({@link RequestBody}).
 */
public final class Lane {
  /** What the lane's downstream said last ({@link Health}). */
  public enum State {
    HEALTHY,
    BACKING_OFF,
    THROTTLED,
    /**
     * The downstream answered the last {@value Health#REJECTING_AFTER} sends with a non-retriable
     * 4xx that rejected them for good, and accepted none since.
     */
    REJECTING
  }

  private final String tenant;
  private final LaneContext ctx;
  private final EventLoop loop;

  /** The connections of the lane's loop, shared with the other lanes there. */
  private final SendSlots slots;

  private final Pending pending = new Pending();
  private final Health health;

  /** Decides the fate of the fragments of each answered send. */
  private final Settlement settlement;

  /** Sync mode: the other loops that send this tenant's large fragments themselves. */
  private final Delegations delegations;

  /** Queue mode: where new fragments go, direct sends and the queue; {@code null} in sync mode. */
  private final DirectSpill direct;

  /** Pumps the lane at a deadline, the end of a linger or a backoff, or to drain after one. */
  private final LaneTimer wake;

  private final Runnable deferredPump = this::deferredPump;

  /** Hears the answer to each send of fragments held in memory ({@link #answered}). */
  private final Outgoing.Owner sends = this::answered;

  private boolean pumpScheduled;
  private int inFlight;
  private long lastActiveNanos;

  /**
   * Whether the lane's last downstream request was answered within the slow bound; false until its
   * first is ({@link SendSlots}).
   */
  private boolean proven;

  /** Set while this lane is in {@link SendSlots}' queue. */
  boolean waitingForSlot;

  /** Set by {@link #close()}: no new sends or reads; what comes back is answered or released. */
  private boolean closed;

  Lane(
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
    this.delegations = new Delegations(messages, tenant, shard);
    this.lastActiveNanos = now();
    TenantQueue queue = ctx.store == null ? null : ctx.store.queue(tenant);
    this.health = new Health(tenant, queue != null, ctx.retryPolicy, ctx.observer, this::withdraw);
    this.settlement = new Settlement(this, ctx, pending, health);
    this.wake = new LaneTimer(loop, this::onWake);
    this.direct =
        queue == null
            ? null
            : new DirectSpill(this, ctx, loop, slots, queue, pending, health, wake);
  }

  public String tenant() {
    return tenant;
  }

  public State state() {
    return health.state();
  }

  /** Uncompressed bytes waiting to be sent. */
  public long pendingBytes() {
    return pending.bytes();
  }

  /** Downstream requests in flight. */
  public int inFlight() {
    return inFlight;
  }

  long now() {
    return loop.ticker().nanoTime();
  }

  /**
   * True until the lane's last downstream request was answered within a quarter of the attempt
   * timeout: before its first answer, and after a slow one or a timeout. Its sends then share half
   * of the loop's connections with the other unproven lanes' ({@link SendSlots}).
   */
  boolean unproven() {
    return !proven;
  }

  /**
   * Whose turn the lane waits in when it is unproven ({@link SendSlots}): the sender of the
   * fragment at its head, or {@code null} for none (a queue drain's records).
   */
  Object waitingSender() {
    return pending.isEmpty() ? null : pending.peek().sender();
  }

  boolean closed() {
    return closed;
  }

  /** Takes a fragment of this tenant; called on the lane's loop. */
  void offer(Fragment f) {
    long now = now();
    lastActiveNanos = now;
    if (closed) {
      finish(f, FragmentOutcome.shuttingDown(f.attempts()));
      return;
    }
    if (direct != null) {
      direct.offer(f, now);
      return;
    }
    if (health.holdsBack(now)) {
      finish(f, health.heldBack(now, f.attempts()));
      return;
    }
    if (!pending.isEmpty() && pending.bytes() + f.size() > ctx.settings.maxPendingBytes()) {
      finish(
          f,
          FragmentOutcome.laneFull(
              pending.bytes(), inFlight, health.retryAfterMillis(now), f.attempts()));
      return;
    }
    f.queuedAt(now);
    pending.add(f);
    if (health.state() == State.HEALTHY && f.compressed() != null) {
      // A large fragment of a healthy tenant from another loop: that loop may send such fragments
      // itself, until this lane backs off or is forgotten (the package documentation).
      delegations.announce(f.origin());
    }
    pumpSoon();
  }

  /** Tells every loop allowed to send for this tenant to hand its fragments here again. */
  void withdraw() {
    delegations.withdrawAll();
  }

  /**
   * Sync mode: a send of another loop's {@link Delegate} failed (429, 5xx, no answer, or a merged
   * request rejected as a whole): its fragments are decided here as if this lane had sent them, and
   * those that waited there are offered here.
   *
   * @param origin the loop whose delegate this failure ended, or -1 when it ended none
   */
  void remoteFailed(List<Fragment> batch, AttemptOutcome o, List<Fragment> waiting, int origin) {
    delegations.ended(origin);
    for (int i = 0; i < waiting.size(); i++) {
      Fragment f = waiting.get(i);
      f.handedFrom(-1);
      offer(f);
    }
    long now = now();
    lastActiveNanos = now;
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).queuedAt(now);
    }
    settlement.settle(batch, Protocol.V1, o, now);
  }

  /**
   * Sync mode: another loop's {@link Delegate} had a send rejected for good ({@code o} a
   * non-retriable 4xx), or accepted ({@code o} a 2xx) after such a rejection: the lane's health
   * hears it as if the lane had sent it, so that rejections in a row are counted wherever the
   * tenant's sends go from.
   */
  void remoteAnswered(AttemptOutcome o) {
    if (o.success()) {
      health.on(Health.Event.DELIVERED, "", -1, now());
    } else {
      health.on(Health.Event.REJECTED, o.describe(), -1, now());
    }
  }

  /**
   * Sends after the tasks already waiting on the loop instead of at once: when the loop is busy,
   * those tasks hand this lane the same tenant's fragments of other sender requests, and they
   * travel downstream together; when it is not, nothing waits. With many tenants per request this
   * is what keeps the downstream requests per sender request well below one per tenant.
   */
  void pumpSoon() {
    if (pumpScheduled) {
      return;
    }
    pumpScheduled = true;
    try {
      loop.execute(deferredPump);
    } catch (RejectedExecutionException shuttingDown) {
      pumpScheduled = false;
      pump(now());
    }
  }

  private void deferredPump() {
    pumpScheduled = false;
    pump(now());
  }

  /** True when the lane holds nothing and has nothing to remember. */
  boolean idleSince(long now, long idleNanos) {
    return pending.isEmpty()
        && inFlight == 0
        && (direct == null || direct.idle())
        && !health.holdsBack(now)
        && now - lastActiveNanos >= idleNanos;
  }

  void pump(long now) {
    pump(now, false);
  }

  /** A connection of the loop is free for this lane ({@link SendSlots}): send what it holds. */
  void slotFree() {
    if (!closed) {
      pump(now(), true);
    }
  }

  /**
   * Sends what may be sent now: the queue's head while a queue-mode lane is not caught up, else
   * what waits here.
   *
   * @param granted a connection was set aside for this lane: one send may start without asking
   */
  private void pump(long now, boolean granted) {
    if (closed) {
      return;
    }
    if (direct != null && direct.route() != DirectSpill.Route.DIRECT) {
      direct.drain(now, granted);
      return;
    }
    if (direct == null) {
      settlement.expire(now, inFlight); // queue mode spills a fragment long before its deadline
    }
    while (!pending.isEmpty() && inFlight < ctx.settings.maxConcurrentSends()) {
      if (health.holdsBack(now) || lingers(now)) {
        break;
      }
      if (!granted && !slots.free(!proven)) {
        // Every connection of the loop is busy: the fragments wait here, where the ones that
        // arrive meanwhile join them, rather than as separate requests inside the sender.
        slots.await(this);
        break;
      }
      granted = false;
      send(now);
    }
    scheduleWake(now);
    if (direct != null) {
      direct.schedule(now);
    }
  }

  /**
   * True while the fragments waiting may wait for more to join them: a send is in flight, they are
   * fewer than {@code batchMaxBytes} and have not waited {@code linger} yet.
   */
  private boolean lingers(long now) {
    return inFlight > 0
        && !health.oneByOne()
        && pending.peek().piece() == null // a piece takes no other fragment: nothing to wait for
        && pending.bytes() < ctx.settings.batchMaxBytes()
        && now - pending.peek().queuedNanos() < ctx.lingerNanos;
  }

  /** Sends the fragment at the head, with those that may travel with it, as one request. */
  private void send(long now) {
    Fragment head = pending.poll();
    FragmentOutcome unsendable =
        RequestBody.inDownstreamProtocol(
            head,
            ctx.protocol.forV2Input(),
            ctx.alloc,
            ctx.settings.maxConvertedBytes(),
            ctx.settings.haLabels());
    if (unsendable != null) {
      finish(head, unsendable);
      return;
    }
    Outgoing batch =
        new Outgoing(Math.min(pending.size() + 1, 16), head.protocol(), now, sends, slots, !proven);
    batch.add(head);
    if (head.protocol() == Protocol.V1 && !health.oneByOne()) {
      pending.joinTo(batch, ctx.settings.batchMaxBytes());
    }
    long timeout = Math.min(ctx.attemptTimeoutNanos, Pending.timeLeft(batch, now));
    try {
      batch.build(ctx);
    } catch (RuntimeException | Error e) {
      settlement.cannotCompress(batch, e);
      return;
    }
    if (head.piece() != null) {
      ctx.observer.splitSend(tenant, batch.size());
    }
    sendStarted(now);
    batch.spill = direct == null ? null : direct.sent(batch, now);
    batch.send(ctx, loop, tenant, timeout);
  }

  /** The answer to a send of fragments held in memory: settled, or handed to the direct route. */
  private void answered(Outgoing batch, AttemptOutcome o) {
    if (batch.spill == null) {
      outcome(batch, batch.protocol, o, batch.started);
    } else {
      direct.answered(batch.spill, batch.protocol, o, batch.started);
    }
  }

  /** A downstream request of the lane (from memory or from the queue) goes out at {@code now}. */
  void sendStarted(long now) {
    inFlight++;
    lastActiveNanos = now;
  }

  /**
   * What every finished downstream request does, whichever mode sent it: frees its slot, tells the
   * observer, and after a 2xx makes the lane healthy again. Returns the time.
   */
  long ended(int items, AttemptOutcome o, long started) {
    inFlight--;
    long now = now();
    lastActiveNanos = now;
    proven = now - started <= ctx.slowSendNanos;
    ctx.observer.attempt(tenant, items, o, now - started);
    if (o.success()) {
      health.on(Health.Event.DELIVERED, "", -1, now);
    }
    return now;
  }

  /** Settles a send of fragments held in memory (sync mode, or a direct send in queue mode). */
  void outcome(List<Fragment> batch, Protocol sent, AttemptOutcome o, long started) {
    settlement.settle(batch, sent, o, ended(batch.size(), o, started));
  }

  void finish(Fragment f, FragmentOutcome outcome) {
    ctx.finish(f, outcome);
  }

  /** Queue mode, after a restart: starts sending what the queue holds. */
  void resume() {
    if (direct != null) {
      direct.drain(now());
    }
  }

  private void scheduleWake(long now) {
    if (pending.isEmpty()) {
      // A wake already set stays: firing with nothing to do costs less than a new timer each time
      // fragments wait again (with many tenants, that was one timer per downstream request).
      return;
    }
    long at = pending.timeLeft(now);
    if (health.holdsBack(now)) {
      at = Math.min(at, health.heldUntil() - now);
    } else if (inFlight > 0
        && inFlight < ctx.settings.maxConcurrentSends()
        && !health.oneByOne()
        && !waitingForSlot) {
      // While the lane waits in SendSlots, the end of the linger could not send anything: the
      // free connection it waits for pumps it. With many tenants most lanes wait there, and
      // this was one timer per downstream request.
      at = Math.min(at, pending.peek().queuedNanos() + ctx.lingerNanos - now);
    }
    wake.atMost(Math.max(at, 0) + now, now);
  }

  private void onWake() {
    pump(now());
  }

  /**
   * Answers everything still waiting and stops the lane (shutdown): from now on fragments are
   * answered 503 at once, fragments of sends still in flight are answered when their outcome comes
   * back (never retried), and queued records read or sent are released without a new read.
   */
  void close() {
    closed = true;
    wake.cancel();
    if (direct != null) {
      direct.close();
    }
    while (!pending.isEmpty()) {
      Fragment f = pending.poll();
      finish(f, FragmentOutcome.shuttingDown(f.attempts()));
    }
  }
}
