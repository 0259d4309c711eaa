package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.Protocol;
import io.prwrelay.server.downstream.WrittenCounts;
import io.prwrelay.server.queue.TenantQueue;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Every downstream send of one tenant goes through its lane, so that what the tenant's downstream
 * does changes only this lane and never another tenant's. A lane lives on one event loop and is
 * touched only there. It holds fragments waiting to be sent ({@link Pending}), at most {@link
 * LaneSettings#maxConcurrentSends()} downstream requests in flight, and a {@link State} ({@link
 * Health}, the state machine):
 *
 * <ul>
 *   <li>{@link State#HEALTHY}: fragments are sent when a send slot is free, after the tasks already
 *       waiting on the loop (which may bring more of the tenant's fragments). While a send is
 *       already in flight, waiting fragments are coalesced for up to {@code linger} into one
 *       downstream request of at most {@code batchMaxBytes}. When every connection of the loop is
 *       busy the lane waits in {@link SendSlots} and then sends all it holds in one request;
 *   <li>{@link State#BACKING_OFF} after a 5xx, connect error or timeout: until the backoff ends,
 *       new fragments are answered at once (503 with the time left as {@code Retry-After});
 *       fragments of the failed send are retried after the backoff at most {@link #MAX_RETRIES}
 *       times, and only when the backoff fits well inside their request's deadline (at most a
 *       quarter of the time left), else answered 503;
 *   <li>{@link State#THROTTLED} after a 429, with or without {@code Retry-After} (Cortex sends
 *       none), until a send succeeds: the lane sends fragments one by one (no coalescing), so that
 *       merging never makes a batch larger than the tenant's burst. Only a {@code Retry-After}
 *       holds new fragments back: until it ends they are answered 429 at once. A 429 is retried
 *       inside the request only once, and only when its {@code Retry-After} fits well inside the
 *       deadline.
 * </ul>
 *
 * A state other than HEALTHY lasts until a send succeeds (or the lane is forgotten), in both modes,
 * and is what {@link LaneObserver#stateChanged} reports: the lane state of the metrics and the log.
 * A non-retriable 4xx rejects only the fragments of that send and leaves the state alone; when the
 * send carried several fragments, they are not rejected together but sent again in halves until
 * only the bad ones are ({@link Bisection}).
 *
 * <p>In sync mode the lane may let another loop send the tenant's large fragments itself while the
 * tenant is healthy ({@link Delegations}, {@link Delegate}); what such a send gets back other than
 * a 2xx or a non-retriable 4xx comes to the lane ({@link #remoteFailed}), as if the lane had sent
 * it. In queue mode the lane sends directly only while it is caught up, and otherwise queues on
 * disk and drains ({@link DirectSpill}, {@link QueueDrain}); its state never fails a fragment fast
 * there: a backing-off tenant's data waits on disk, within the queue's bounds.
 *
 * <p>PRW 2.0 fragments (and queued records) each carry their own symbols table, so they are never
 * concatenated: each goes downstream alone, and PRW 1.0 and 2.0 bytes never share a request. When
 * the downstream takes only PRW 1.0 ({@link io.prwrelay.server.downstream.DownstreamProtocol}), a
 * PRW 2.0 fragment is converted just before it is sent ({@link RequestBody#convertToV1}); in {@code
 * auto} mode a 415 to a PRW 2.0 request switches the relay to 1.0 and the same fragments are sent
 * again, converted.
 */
public final class Lane {
  /**
   * Retries of a fragment inside its request after 5xx, connect errors or timeouts: enough to ride
   * out a blip, few enough that an outage is reported to the sender within a few hundred
   * milliseconds.
   */
  static final int MAX_RETRIES = 2;

  /** What the lane's downstream said last ({@link Health}). */
  public enum State {
    HEALTHY,
    BACKING_OFF,
    THROTTLED
  }

  private final String tenant;
  private final LaneContext ctx;
  private final EventLoop loop;
  private final Lanes lanes;

  /** The connections of the lane's loop, shared with the other lanes there. */
  private final SendSlots slots;

  private final Pending pending = new Pending();
  private final Health health;

  /** Sync mode: the other loops that send this tenant's large fragments themselves. */
  private final Delegations delegations;

  /** Queue mode: where new fragments go, direct sends and the queue; {@code null} in sync mode. */
  private final DirectSpill direct;

  /** Pumps the lane at a deadline, the end of a linger or a backoff, or to drain after one. */
  private final LaneTimer wake;

  private final Runnable deferredPump = this::deferredPump;
  private boolean pumpScheduled;
  private int inFlight;
  private long lastActiveNanos;

  /** Set while this lane is in {@link SendSlots}' queue. */
  boolean waitingForSlot;

  /** Set by {@link #close()}: no new sends or reads; what comes back is answered or released. */
  private boolean closed;

  Lane(String tenant, LaneContext ctx, EventLoop loop, SendSlots slots, Lanes lanes, int shard) {
    this.tenant = tenant;
    this.ctx = ctx;
    this.loop = loop;
    this.slots = slots;
    this.lanes = lanes;
    this.delegations = new Delegations(lanes, tenant, shard);
    this.lastActiveNanos = now();
    TenantQueue queue = ctx.store == null ? null : ctx.store.queue(tenant);
    this.health = new Health(tenant, queue != null, ctx.retryPolicy, ctx.observer, this::withdraw);
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

  boolean closed() {
    return closed;
  }

  /** Takes a fragment of this tenant; called on the lane's loop. */
  void offer(Fragment f) {
    long now = now();
    lastActiveNanos = now;
    if (closed) {
      finish(f, FragmentOutcome.shuttingDown(f.attempts));
      return;
    }
    if (direct != null) {
      direct.offer(f, now);
      return;
    }
    if (health.holdsBack(now)) {
      finish(
          f,
          FragmentOutcome.heldBack(
              health.state(), health.reason(), health.retryAfterMillis(now), f.attempts));
      return;
    }
    if (!pending.isEmpty() && pending.bytes() + f.size() > ctx.settings.maxPendingBytes()) {
      finish(
          f,
          FragmentOutcome.laneFull(
              pending.bytes(), inFlight, health.retryAfterMillis(now), f.attempts));
      return;
    }
    f.queuedNanos = now;
    pending.add(f);
    if (health.state() == State.HEALTHY && f.compressed() != null) {
      // A large fragment of a healthy tenant from another loop: from now on that loop sends such
      // fragments itself, until this lane backs off or is forgotten. Each would otherwise wait for
      // this loop to take it and for the routing loop to take its outcome back, and coalescing
      // gains little for a fragment that large.
      delegations.announce(f.origin);
    }
    pumpSoon();
  }

  /** Tells every loop allowed to send for this tenant to hand its fragments here again. */
  void withdraw() {
    delegations.withdrawAll();
  }

  /**
   * Sync mode: fragments that another loop sent itself, as one request ({@link Delegate}), and that
   * came back 429, 5xx or without an answer, with the fragments that waited there for a send:
   * decided here as if this lane had sent them and the others had come here. That loop no longer
   * sends for the tenant; the next large fragment from there, once this lane is healthy, allows it
   * again. Also a request of several fragments rejected as a whole, which this lane sends again in
   * halves (that loop still sends for the tenant).
   *
   * @param origin the loop whose delegate this failure ended, or -1 when it ended none
   */
  void remoteFailed(List<Fragment> batch, AttemptOutcome o, List<Fragment> waiting, int origin) {
    delegations.ended(origin);
    for (int i = 0; i < waiting.size(); i++) {
      Fragment f = waiting.get(i);
      f.origin = -1;
      offer(f);
    }
    long now = now();
    lastActiveNanos = now;
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).queuedNanos = now;
    }
    settle(batch, Protocol.V1, o, now);
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
      expire(now); // queue mode spills a fragment long before its deadline instead
    }
    while (!pending.isEmpty() && inFlight < ctx.settings.maxConcurrentSends()) {
      if (health.holdsBack(now) || lingers(now)) {
        break;
      }
      if (!granted && !slots.free()) {
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
        && pending.peek().piece == null // a piece takes no other fragment: nothing to wait for
        && pending.bytes() < ctx.settings.batchMaxBytes()
        && now - pending.peek().queuedNanos < ctx.lingerNanos;
  }

  /** Answers every waiting fragment whose request deadline has passed. */
  private void expire(long now) {
    List<Fragment> late = pending.expire(now);
    for (int i = 0; i < late.size(); i++) {
      Fragment f = late.get(i);
      finish(
          f,
          FragmentOutcome.pastDeadline(
              inFlight,
              health.state() == State.HEALTHY ? null : health.reason(),
              health.retryAfterMillis(now),
              f.attempts));
    }
  }

  /** Sends the fragment at the head, with those that may travel with it, as one request. */
  private void send(long now) {
    Fragment head = pending.poll();
    if (!inDownstreamProtocol(head)) {
      return;
    }
    List<Fragment> batch = new ArrayList<>(Math.min(pending.size() + 1, 16));
    batch.add(head);
    if (head.protocol() == Protocol.V1 && !health.oneByOne()) {
      pending.joinTo(batch, ctx.settings.batchMaxBytes());
    }
    Protocol protocol = head.protocol();
    long timeout = Math.min(ctx.attemptTimeoutNanos, Pending.timeLeft(batch, now));
    ByteBuf compressed;
    try {
      compressed = RequestBody.of(batch, ctx.alloc);
    } catch (RuntimeException | Error e) {
      for (int j = 0; j < batch.size(); j++) {
        Fragment f = batch.get(j);
        finish(f, FragmentOutcome.cannotCompress(e, f.attempts));
      }
      return;
    }
    // Indexed loops over batches here and below: an iterator per loop and send showed in the
    // allocation profile.
    for (int j = 0; j < batch.size(); j++) {
      batch.get(j).attempts++;
    }
    if (head.piece != null) {
      ctx.observer.splitSend(tenant, batch.size());
    }
    slots.take();
    sendStarted(now);
    DirectSpill.Send d = direct == null ? null : direct.sent(batch, now);
    Future<AttemptOutcome> result = ctx.sender.send(loop, tenant, protocol, compressed, timeout);
    result.addListener(
        x -> {
          compressed.release();
          try {
            if (d == null) {
              outcome(batch, protocol, result.getNow(), now);
            } else {
              direct.answered(d, protocol, result.getNow(), now);
            }
          } finally {
            slots.release();
          }
        });
  }

  /**
   * Converts a PRW 2.0 fragment to 1.0 when the downstream takes only 1.0. False when it cannot be
   * converted; the fragment is answered (400) then.
   */
  private boolean inDownstreamProtocol(Fragment f) {
    if (f.protocol() == Protocol.V1 || ctx.protocol.forV2Input() == Protocol.V2) {
      return true;
    }
    FragmentOutcome failed =
        RequestBody.convertToV1(f, ctx.alloc, ctx.settings.maxConvertedBytes());
    if (failed != null) {
      finish(f, failed);
      return false;
    }
    return true;
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
    ctx.observer.attempt(tenant, items, o, now - started);
    if (o.success()) {
      health.on(Health.Event.DELIVERED, "", -1, now);
    }
    return now;
  }

  /** Settles a send of fragments held in memory (sync mode, or a direct send in queue mode). */
  void outcome(List<Fragment> batch, Protocol sent, AttemptOutcome o, long started) {
    settle(batch, sent, o, ended(batch.size(), o, started));
  }

  /**
   * Answers, retries or requeues the fragments of a send after its outcome, as the lane's {@link
   * State} says (the list of {@link Lane}).
   */
  private void settle(List<Fragment> batch, Protocol sent, AttemptOutcome o, long now) {
    if (!closed && ctx.protocol.fallsBackOn(sent, o)) {
      // The downstream takes only PRW 1.0: the same fragments go again, converted.
      ctx.protocol.fallBack(o);
      for (int i = batch.size() - 1; i >= 0; i--) {
        requeue(batch.get(i));
      }
      pump(now);
      return;
    }
    // The downstream's own written counts belong to a fragment only when it travelled alone.
    WrittenCounts written = batch.size() == 1 ? o.written() : null;
    if (closed && !o.success() && o.retriable()) {
      for (int j = 0; j < batch.size(); j++) {
        Fragment f = batch.get(j);
        finish(f, FragmentOutcome.shuttingDown(f.attempts));
      }
      return;
    }
    if (!o.success() && !o.retriable() && batch.size() > 1) {
      resendHalves(batch);
    } else if (o.success() || !o.retriable()) {
      lanes.answer(batch, o);
    } else if (o.status() == 429) {
      long retryAfter = o.retryAfterMillis();
      // Throttled also without Retry-After (delay 0: new fragments are still sent).
      long delay = health.on(Health.Event.THROTTLED, o.describe(), retryAfter, now);
      for (int i = batch.size() - 1; i >= 0; i--) {
        Fragment f = batch.get(i);
        if (retryAfter >= 0 && f.attempts == 1 && fitsWellInside(delay, f, now)) {
          requeue(f);
        } else {
          finish(f, FragmentOutcome.throttled(o.describe(), retryAfter, f.attempts, written));
        }
      }
    } else {
      long delay = health.on(Health.Event.FAILED, o.describe(), o.retryAfterMillis(), now);
      long retryAfter = TimeUnit.NANOSECONDS.toMillis(delay) + 1;
      for (int i = batch.size() - 1; i >= 0; i--) {
        Fragment f = batch.get(i);
        if (f.attempts <= MAX_RETRIES && fitsWellInside(delay, f, now)) {
          requeue(f);
        } else {
          finish(
              f, FragmentOutcome.failed(o.status(), o.describe(), retryAfter, f.attempts, written));
        }
      }
    }
    pump(now);
  }

  /**
   * A send of several fragments was rejected as a whole (a non-retriable 4xx): one sender's bad
   * series may have failed the others'. Its two halves go again ahead of what waits, each as a
   * request of its own ({@link Bisection}); fragments that arrive meanwhile wait behind them and
   * are never merged with them. A closed lane cannot send again: its fragments get 503, for their
   * senders to retry.
   */
  private void resendHalves(List<Fragment> batch) {
    if (closed) {
      for (int j = 0; j < batch.size(); j++) {
        Fragment f = batch.get(j);
        finish(f, FragmentOutcome.shuttingDown(f.attempts));
      }
      return;
    }
    Bisection.halve(batch);
    for (int i = batch.size() - 1; i >= 0; i--) {
      requeue(batch.get(i));
    }
  }

  /** A retry after {@code delay} fits when it takes at most a quarter of the time left. */
  private static boolean fitsWellInside(long delay, Fragment f, long now) {
    return delay <= (f.deadlineNanos() - now) / 4;
  }

  private void requeue(Fragment f) {
    pending.addFirst(f);
  }

  void finish(Fragment f, FragmentOutcome outcome) {
    lanes.finish(f, outcome);
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
      at = Math.min(at, pending.peek().queuedNanos + ctx.lingerNanos - now);
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
      finish(f, FragmentOutcome.shuttingDown(f.attempts));
    }
  }
}
