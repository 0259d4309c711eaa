package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.Protocol;
import io.prwrelay.server.downstream.WrittenCounts;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import io.prwrelay.server.queue.QueuedRecord;
import io.prwrelay.server.queue.TenantQueue;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Every downstream send of one tenant goes through its lane, so that what the tenant's downstream
 * does changes only this lane and never another tenant's. In sync mode the lane may let another
 * loop send the tenant's large fragments itself while the tenant is healthy ({@link Lanes#submit});
 * what such a send gets back other than a 2xx or a non-retriable 4xx comes to the lane, as if the
 * lane had sent it.
 *
 * <p>A lane lives on one event loop and is touched only there. It holds fragments waiting to be
 * sent, at most {@link LaneSettings#maxConcurrentSends()} downstream requests in flight, and a
 * state:
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
 *
 * <p>A non-retriable 4xx rejects only the fragments of that send and leaves the state alone; when
 * the send carried several fragments, they are not rejected together but sent again in halves until
 * only the bad ones are ({@link Bisection}).
 *
 * <p>In queue mode a lane that is caught up (its queue empty, nothing being appended or read, no
 * backoff running) sends its fragments directly, as in sync mode: a 2xx answers them {@link
 * Kind#DELIVERED} without touching the disk, a non-retriable 4xx {@link Kind#REJECTED}. Any other
 * answer, or none within the direct timeout ({@link LaneContext#directNanos}), spills the lane: the
 * fragments of its direct sends still out (in the order they went) and every fragment waiting are
 * appended to the queue, and every fragment after them too until the queue is drained empty. No
 * queued record is sent while a direct send is out; once all spilled sends are back, the records of
 * those delivered are acknowledged, in order, up to the first that was not (the rest are sent
 * again: at-least-once). Otherwise every fragment is compressed and appended to the tenant's
 * on-disk {@link TenantQueue}; its outcome is {@link Kind#QUEUED} once the record is fsync'd (or
 * 503 when the disk refuses it). The lane drains its queue in order, one downstream request at a
 * time, merging the records waiting at the head into one request of at most {@code batchMaxBytes}.
 * A 2xx acknowledges the records, a non-retriable 4xx drops a record sent alone (counted) and makes
 * merged records go again in halves ({@link Bisection.Records}), a 429, 5xx or timeout keeps them
 * and backs the lane off; from then until a send succeeds the lane sends one record at a time, so
 * that a failing tenant's retries do not read and merge a whole batch again each time (up to {@code
 * batchMaxBytes} on the queue's I/O thread and on this event loop, which other tenants share). The
 * state never fails a fragment fast in queue mode: a backing-off tenant's data waits on disk,
 * within the queue's bounds.
 *
 * <p>PRW 2.0 fragments (and queued records) each carry their own symbols table, so they are never
 * concatenated: each goes downstream alone, and PRW 1.0 and 2.0 bytes never share a request. When
 * the downstream takes only PRW 1.0 ({@link io.prwrelay.server.downstream.DownstreamProtocol}), a
 * PRW 2.0 fragment is converted just before it is sent; in {@code auto} mode a 415 to a PRW 2.0
 * request switches the relay to 1.0 and the same fragments are sent again, converted.
 */
public final class Lane {
  /**
   * Retries of a fragment inside its request after 5xx, connect errors or timeouts: enough to ride
   * out a blip, few enough that an outage is reported to the sender within a few hundred
   * milliseconds.
   */
  static final int MAX_RETRIES = 2;

  /** What the lane's downstream said last. */
  public enum State {
    HEALTHY,
    BACKING_OFF,
    THROTTLED
  }

  private final String tenant;
  private final LaneContext ctx;
  private final EventLoop loop;
  private final Pending pending = new Pending();

  private int inFlight;
  private final Health health;
  private long lastActiveNanos;

  /** Pumps the lane at a deadline, the end of a linger or a backoff, or to drain after one. */
  private final LaneTimer wake;

  private boolean pumpScheduled;

  /** The connections of the lane's loop, shared with the other lanes there. */
  private final SendSlots slots;

  /** Set while this lane is in {@link SendSlots}' queue. */
  boolean waitingForSlot;

  private final Runnable deferredPump = this::deferredPump;

  /** Set by {@link #close()}: no new sends or reads; what comes back is answered or released. */
  private boolean closed;

  /** The tenant's on-disk queue in queue mode, else {@code null}. */
  private final TenantQueue queue;

  /** Appends not yet fsync'd, and whether a read of the queue is under way (queue mode). */
  private int appending;

  private boolean reading;

  /**
   * Queue mode: new fragments go to the queue, because it holds a backlog (or did a moment ago) or
   * direct delivery is off. False while the lane is caught up and sends fragments directly.
   */
  private boolean queueing;

  /**
   * Queue mode, catching up: the queue's last records are being drained, and new fragments wait in
   * memory (until their spill time) to be sent directly once it is empty.
   */
  private boolean holding;

  /** Queue mode: direct sends not answered yet, in the order they were sent. */
  private final ArrayDeque<DirectSend> directSends = new ArrayDeque<>();

  /** Queue mode: direct sends spilled to the queue, in the order they went, until all are back. */
  private final List<DirectSend> spilledSends = new ArrayList<>();

  /** Queue mode: acknowledgements of records that spilled direct sends delivered, under way. */
  private int acking;

  /** Queue mode: the pieces of a rejected merged read still to send ({@link Bisection}). */
  private final Bisection.Records split = new Bisection.Records();

  /** Queue mode: spills the oldest direct send or waiting fragment not answered in time. */
  private final LaneTimer spillTimer;

  /** The lanes this one belongs to. */
  private final Lanes lanes;

  /** Sync mode: the other loops that send this tenant's large fragments themselves. */
  private final Delegations delegations;

  Lane(String tenant, LaneContext ctx, EventLoop loop, SendSlots slots, Lanes lanes, int shard) {
    this.tenant = tenant;
    this.ctx = ctx;
    this.loop = loop;
    this.slots = slots;
    this.lanes = lanes;
    this.delegations = new Delegations(lanes, tenant, shard);
    this.lastActiveNanos = now();
    this.queue = ctx.store == null ? null : ctx.store.queue(tenant);
    this.queueing = queue != null && (ctx.directNanos == 0 || !queue.isEmpty());
    this.health = new Health(tenant, queue != null, ctx.retryPolicy, ctx.observer, this::withdraw);
    this.wake = new LaneTimer(loop, this::onWake);
    this.spillTimer = new LaneTimer(loop, this::onSpillTimer);
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

  private long now() {
    return loop.ticker().nanoTime();
  }

  /** Takes a fragment of this tenant; called on the lane's loop. */
  void offer(Fragment f) {
    long now = now();
    lastActiveNanos = now;
    if (closed) {
      finish(f, FragmentOutcome.shuttingDown(f.attempts));
      return;
    }
    if (queue != null) {
      offerQueued(f, now);
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
    announceTo(f.origin, f);
    pumpSoon();
  }

  /**
   * Sync mode: a large fragment of a healthy tenant came from another loop. From now on that loop
   * sends such fragments itself, until this lane backs off or is forgotten ({@link #withdraw}):
   * each would otherwise wait for this loop to take it and for the routing loop to take its outcome
   * back, and coalescing gains little for a fragment that large.
   */
  private void announceTo(int origin, Fragment f) {
    if (health.state() == State.HEALTHY && f.compressed() != null) {
      delegations.announce(origin);
    }
  }

  /** Tells every loop told by {@link #announceTo} to hand this tenant's fragments here again. */
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
   * Queue mode: appends the fragment to the queue while the lane has a backlog; else keeps it for a
   * direct send (or, catching up, until the queue is empty), and spills everything to the queue
   * when the lane holds more than {@code maxPendingBytes}.
   */
  private void offerQueued(Fragment f, long now) {
    if (queueing && !holding) {
      enqueue(f);
      return;
    }
    f.queuedNanos = now;
    pending.add(f);
    if (pending.size() > 1 && pending.bytes() > ctx.settings.maxPendingBytes()) {
      spill();
      return;
    }
    scheduleSpill(now);
    pumpSoon();
  }

  /**
   * Sends after the tasks already waiting on the loop instead of at once: when the loop is busy,
   * those tasks hand this lane the same tenant's fragments of other sender requests, and they
   * travel downstream together; when it is not, nothing waits. With many tenants per request this
   * is what keeps the downstream requests per sender request well below one per tenant.
   */
  private void pumpSoon() {
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
        && (queue == null || (appending == 0 && acking == 0 && !reading && queue.isEmpty()))
        && !health.holdsBack(now)
        && now - lastActiveNanos >= idleNanos;
  }

  private void pump(long now) {
    pump(now, false);
  }

  /** A connection of the loop is free for this lane ({@link SendSlots}): send what it holds. */
  void slotFree() {
    if (closed) {
      return;
    }
    if (queue != null && queueing) {
      drain(now(), true);
    } else {
      pump(now(), true);
    }
  }

  /**
   * Sends what may be sent now.
   *
   * @param granted a connection was set aside for this lane: one send may start without asking
   */
  private void pump(long now, boolean granted) {
    if (closed) {
      return;
    }
    if (queue != null && queueing) {
      drain(now, granted);
      return;
    }
    if (queue == null) {
      expire(now); // queue mode spills a fragment long before its deadline instead
    }
    while (!pending.isEmpty() && inFlight < ctx.settings.maxConcurrentSends()) {
      if (health.holdsBack(now)) {
        break;
      }
      if (inFlight > 0
          && !health.oneByOne()
          && pending.peek().piece == null // a piece takes no other fragment: nothing to wait for
          && pending.bytes() < ctx.settings.batchMaxBytes()
          && now - pending.peek().queuedNanos < ctx.lingerNanos) {
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
    if (queue != null) {
      scheduleSpill(now);
    }
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
    inFlight++;
    slots.take();
    long started = now;
    DirectSend direct = queue == null ? null : new DirectSend(batch, spillAt(batch, now));
    if (direct != null) {
      directSends.add(direct);
    }
    Future<AttemptOutcome> result = ctx.sender.send(loop, tenant, protocol, compressed, timeout);
    result.addListener(
        x -> {
          compressed.release();
          try {
            if (direct == null) {
              outcome(batch, protocol, result.getNow(), started);
            } else {
              directOutcome(direct, protocol, result.getNow(), started);
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

  /**
   * What every finished downstream request does, whichever mode sent it: frees its slot, tells the
   * observer, and after a 2xx makes the lane healthy again. Returns the time.
   */
  private long ended(int items, AttemptOutcome o, long started) {
    inFlight--;
    long now = now();
    lastActiveNanos = now;
    ctx.observer.attempt(tenant, items, o, now - started);
    if (o.success()) {
      health.on(Health.Event.DELIVERED, "", -1, now);
    }
    return now;
  }

  private void outcome(List<Fragment> batch, Protocol sent, AttemptOutcome o, long started) {
    settle(batch, sent, o, ended(batch.size(), o, started));
  }

  /** Answers, retries or requeues the fragments of a sync-mode send after its outcome. */
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

  private void finish(Fragment f, FragmentOutcome outcome) {
    lanes.finish(f, outcome);
  }

  /**
   * Queue mode: appends the fragment's snappy block to the tenant's queue, as it will be sent (or
   * joined with the blocks next to it).
   */
  private CompletableFuture<TenantQueue.Position> enqueue(Fragment f) {
    try {
      f.compress(ctx.alloc); // a no-op for fragments that came through Lanes
    } catch (RuntimeException | Error e) {
      finish(f, FragmentOutcome.cannotCompress(e, 0));
      return CompletableFuture.failedFuture(e);
    }
    appending++;
    // The fragment keeps its block until appended() completes it, after the queue is done with it.
    CompletableFuture<TenantQueue.Position> appended =
        queue.appendAt(
            f.compressed(),
            f.counts().series(),
            f.protocol() == Protocol.V2,
            ctx.wallMillis.getAsLong());
    appended.whenComplete((ok, error) -> loop.execute(() -> appended(f, error)));
    return appended;
  }

  private void appended(Fragment f, Throwable error) {
    appending--;
    if (error == null) {
      finish(f, FragmentOutcome.queued());
    } else {
      finish(f, FragmentOutcome.notQueued(error.getCause() != null ? error.getCause() : error));
    }
    drain(now());
  }

  /** Queue mode: sends the records at the head of the queue, one request at a time. */
  private void drain(long now) {
    drain(now, false);
  }

  /**
   * @param granted a connection was set aside for this lane ({@link SendSlots})
   */
  private void drain(long now, boolean granted) {
    if (closed || !queueing || reading || inFlight > 0 || acking > 0) {
      return; // no queued record goes while a direct send of the lane is still out
    }
    if (queue.isEmpty()) {
      split.clear(); // records dropped by the queue's bounds meanwhile
      caughtUp(now);
      return;
    }
    if (health.holdsBack(now)) {
      wake.set(health.heldUntil(), now);
      return;
    }
    if (!granted && !slots.free()) {
      slots.await(this);
      return;
    }
    // The connection is counted from the read on, so that lanes reading at once stay within them.
    slots.take();
    reading = true;
    queue
        .read(split.limit(health.oneByOne() ? 1 : 4096), ctx.settings.batchMaxBytes(), ctx.alloc)
        .whenComplete((records, error) -> loop.execute(() -> read(records, error)));
  }

  private void read(List<QueuedRecord> records, Throwable error) {
    reading = false;
    boolean sending = false;
    try {
      sending = readAndSend(records, error);
    } finally {
      if (!sending) {
        slots.release();
      }
    }
  }

  /** Sends what a queue read returned; false when nothing was sent. */
  private boolean readAndSend(List<QueuedRecord> records, Throwable error) {
    if (closed) {
      if (records != null) {
        release(records);
      }
      return false;
    }
    long now = now();
    if (error != null) {
      Throwable cause = error.getCause() != null ? error.getCause() : error;
      health.on(
          Health.Event.READ_FAILED,
          "cannot read the tenant's queue: " + cause.getMessage(),
          -1,
          now);
      wake.set(health.heldUntil(), now);
      return false;
    }
    if (records.isEmpty()) {
      caughtUp(now);
      return false;
    }
    RequestBody.OfRecords body;
    try {
      body =
          RequestBody.ofRecords(
              records,
              ctx.protocol.forV2Input(),
              ctx.settings.batchMaxBytes(),
              ctx.maxDecompressedBytes,
              ctx.settings.maxConvertedBytes(),
              ctx.alloc);
    } catch (CodecException | RuntimeException e) {
      // Records pass their CRC, so this is a record the relay itself could not have written. Only
      // that record is dropped: when several were read, they are read again one at a time first.
      release(records);
      if (!health.oneByOne() && records.size() > 1) {
        health.on(Health.Event.UNREADABLE, "", -1, now);
      } else {
        drop(records.subList(0, 1), "queued batch cannot be sent: " + e.getMessage());
      }
      // Hands the connection on before looking at the queue again.
      loop.execute(this::resume);
      return false;
    }
    List<QueuedRecord> batch = records.subList(0, body.records());
    if (body.unconvertible() != null) {
      release(records);
      drop(batch, "queued PRW 2.0 batch cannot be converted to 1.0: " + body.unconvertible());
      loop.execute(this::resume); // hands the connection on before looking at the queue again
      return false;
    }
    Protocol protocol = body.protocol();
    ByteBuf content = body.content();
    if (ctx.directNanos > 0 && !holding && queue.records() <= batch.size()) {
      // This send carries all that is queued: new fragments wait in memory for it rather than
      // join a queue that would never be empty under a steady flow, and go directly once it is.
      holding = true;
    }
    if (split.active()) {
      ctx.observer.splitSend(tenant, batch.size());
    }
    inFlight++;
    lastActiveNanos = now;
    long started = now;
    Future<AttemptOutcome> result =
        ctx.sender.send(loop, tenant, protocol, content, ctx.attemptTimeoutNanos);
    result.addListener(
        x -> {
          content.release();
          release(records);
          try {
            sentQueued(batch, protocol, result.getNow(), started);
          } finally {
            slots.release();
          }
        });
    return true;
  }

  private void sentQueued(
      List<QueuedRecord> records, Protocol sent, AttemptOutcome o, long started) {
    long now = ended(records.size(), o, started);
    if (!closed && ctx.protocol.fallsBackOn(sent, o)) {
      // The records stay at the head and are read again, converted to PRW 1.0.
      ctx.protocol.fallBack(o);
      drain(now);
      return;
    }
    if (!o.success() && !o.retriable() && records.size() > 1) {
      // Rejected as a whole: the records stay, read again in halves, and only one rejected alone
      // is dropped (Bisection). After a shutdown they wait for the next start, merged again.
      split.rejected(records.size());
      drain(now);
      return;
    }
    if (o.success() || !o.retriable()) {
      split.consumed(records.size());
      queue.ack(records);
      ctx.observer.drained(tenant, records.size(), series(records), o);
      drain(now);
      return;
    }
    if (closed) {
      return; // the records stay queued for the next start
    }
    if (holding) {
      spill(); // what waits in memory for the queue to empty goes behind its records
    }
    backOff(o, series(records), now);
  }

  /**
   * Queue mode, after a 429, 5xx or timeout to a send of {@code series} series: backs the lane off
   * (throttled for a 429, those series counted as throttled), sends one record per request until a
   * send succeeds, and drains again once the backoff ends.
   */
  private void backOff(AttemptOutcome o, long series, long now) {
    if (o.status() == 429) {
      ctx.observer.throttledQueued(tenant, series, o);
    }
    long delay =
        health.on(
            o.status() == 429 ? Health.Event.THROTTLED : Health.Event.FAILED,
            o.describe(),
            o.retryAfterMillis(),
            now);
    long t = now();
    wake.set(t + delay, t);
  }

  /**
   * Queue mode, a direct send came back. Not spilled yet: a 2xx, a non-retriable 4xx, a fall-back
   * to PRW 1.0 or a shutdown is answered as in sync mode ({@link #outcome}); anything else spills
   * it (with every other direct send and fragment waiting) to the queue and backs the lane off.
   * Spilled already: its fragments are answered by their appends, and once every spilled send is
   * back the records of those answered 2xx are acknowledged ({@link #settleSpilled}), so that they
   * are not sent a second time.
   */
  private void directOutcome(DirectSend d, Protocol sent, AttemptOutcome o, long started) {
    if (!d.spilled
        && (o.success() || !o.retriable() || closed || ctx.protocol.fallsBackOn(sent, o))) {
      directSends.remove(d);
      outcome(d.batch, sent, o, started);
      return;
    }
    long now = ended(d.batch.size(), o, started);
    if (d.spilled) {
      directSends.remove(d);
      spilledOutcome(d, o, now);
      return;
    }
    spill(); // every direct send still out, this one included, in the order they went
    directSends.remove(d);
    d.back(o);
    backOff(o, fragmentSeries(d.batch), now);
    settleSpilled(now);
  }

  /** A spilled direct send came back; its fragments are answered by their appends. */
  private void spilledOutcome(DirectSend d, AttemptOutcome o, long now) {
    if (closed) {
      return; // its records stay queued for the next start (at-least-once)
    }
    d.back(o);
    if (!o.success() && o.retriable()) {
      backOff(o, fragmentSeries(d.batch), now);
    }
    // A rejected spilled send's records are sent again from the queue and dropped if rejected
    // again (counted), like any queued record.
    settleSpilled(now);
  }

  /**
   * Once every spilled direct send is back: acknowledges the records of those delivered (2xx) up to
   * the first that was not, in the order they went, since acknowledgement is cumulative; from that
   * one on, records are sent again from the queue (at-least-once).
   */
  private void settleSpilled(long now) {
    for (DirectSend d : spilledSends) {
      if (d.outcome == null) {
        return; // the queue waits for it: nothing queued goes while a direct send is out
      }
    }
    List<DirectSend> delivered = new ArrayList<>(spilledSends.size());
    for (DirectSend d : spilledSends) {
      if (!d.outcome.success()) {
        break;
      }
      delivered.add(d);
    }
    spilledSends.clear();
    if (delivered.isEmpty()) {
      drain(now);
      return;
    }
    acking++;
    List<CompletableFuture<TenantQueue.Position>> appends = new ArrayList<>();
    for (DirectSend d : delivered) {
      appends.addAll(d.appends);
    }
    CompletableFuture.allOf(appends.toArray(new CompletableFuture<?>[0]))
        .whenComplete((x, e) -> loop.execute(() -> ackSpilled(delivered)));
  }

  /**
   * Acknowledges the records of spilled direct sends that were delivered, unless an older record of
   * the tenant is still queued: then they are sent again (at-least-once).
   *
   * @param delivered consecutive spilled sends, in the order they went, every append done
   */
  private void ackSpilled(List<DirectSend> delivered) {
    TenantQueue.Position first = null;
    TenantQueue.Position last = null;
    long records = 0;
    long series = 0;
    for (DirectSend d : delivered) {
      for (int i = 0; i < d.appends.size(); i++) {
        CompletableFuture<TenantQueue.Position> a = d.appends.get(i);
        if (a.isCompletedExceptionally()) {
          continue; // nothing was queued for that fragment
        }
        last = a.join();
        if (first == null) {
          first = last;
        }
        records++;
        series += d.batch.get(i).counts().series();
      }
    }
    if (closed || first == null) {
      acking--;
      drain(now());
      return;
    }
    long n = records;
    long s = series;
    AttemptOutcome o = delivered.get(0).outcome;
    queue
        .ackFrom(first, last)
        .whenComplete(
            (acked, error) ->
                loop.execute(
                    () -> {
                      acking--;
                      if (error == null && acked) {
                        ctx.observer.drained(tenant, n, s, o);
                      }
                      drain(now());
                    }));
  }

  /**
   * Queue mode: from now on the lane queues. Appends, in this order, the fragments of the direct
   * sends still out (in the order they went; their outcomes no longer answer them) and every
   * fragment waiting in memory; each is answered once fsync'd.
   */
  private void spill() {
    queueing = true;
    holding = false;
    for (DirectSend d : directSends) {
      if (!d.spilled) {
        d.spilled = true;
        spilledSends.add(d);
        d.appends = new ArrayList<>(d.batch.size());
        for (Fragment f : d.batch) {
          d.appends.add(enqueue(f));
        }
      }
    }
    while (!pending.isEmpty()) {
      enqueue(pending.poll());
    }
  }

  /**
   * Queue mode: the queue is empty and nothing of the lane is out. Once the last appends are done
   * (meanwhile new fragments wait in memory) and no backoff is running, the lane sends directly
   * again.
   */
  private void caughtUp(long now) {
    if (ctx.directNanos == 0 || closed || !queueing) {
      return;
    }
    if (health.holdsBack(now)) {
      return;
    }
    if (appending > 0) {
      holding = true; // appended() drains again once they are on disk
      scheduleSpill(now);
      return;
    }
    queueing = false;
    holding = false;
    if (!pending.isEmpty()) {
      pump(now);
    }
  }

  /**
   * When a fragment waiting in memory goes to the queue instead: half-way to its request's deadline
   * while it waits for a connection, as sync mode's fragments do (only the downstream's answer is
   * timed); while the lane catches up, after the direct timeout, since it waits only for the queue.
   */
  private long spillAt(Fragment f) {
    long halfway = halfwayToDeadline(f);
    return holding ? Math.min(halfway, f.queuedNanos + ctx.directNanos) : halfway;
  }

  /** When a direct send that went out at {@code now} spills if not answered 2xx by then. */
  private long spillAt(List<Fragment> batch, long now) {
    long at = now + ctx.directNanos;
    for (Fragment f : batch) {
      at = Math.min(at, halfwayToDeadline(f));
    }
    return at;
  }

  /** Half-way from when the fragment began to wait in the lane to its request's deadline. */
  private static long halfwayToDeadline(Fragment f) {
    return f.queuedNanos + Math.max(0, f.deadlineNanos() - f.queuedNanos) / 2;
  }

  /** Queue mode: times the spill of the oldest direct send or waiting fragment. */
  private void scheduleSpill(long now) {
    if (ctx.directNanos == 0 || (queueing && !holding) || closed) {
      return;
    }
    long at = nextSpill();
    if (at != Long.MAX_VALUE) {
      spillTimer.atMost(at, now);
    }
  }

  /** Spill time of the oldest direct send not spilled or fragment waiting, or MAX_VALUE. */
  private long nextSpill() {
    long at = Long.MAX_VALUE;
    DirectSend first = directSends.peekFirst();
    if (first != null && !first.spilled) {
      at = first.spillAt;
    }
    if (!pending.isEmpty()) {
      at = Math.min(at, spillAt(pending.peek()));
    }
    return at;
  }

  private void onSpillTimer() {
    if (closed || (queueing && !holding)) {
      return;
    }
    long now = now();
    long at = nextSpill();
    if (at != Long.MAX_VALUE && now - at >= 0) {
      spill(); // no answer within the spill delay: the sender gets its answer from the disk
    } else {
      scheduleSpill(now);
    }
  }

  private static long series(List<QueuedRecord> records) {
    long n = 0;
    for (QueuedRecord r : records) {
      n += r.series();
    }
    return n;
  }

  private static long fragmentSeries(List<Fragment> batch) {
    long n = 0;
    for (int i = 0; i < batch.size(); i++) {
      n += batch.get(i).counts().series();
    }
    return n;
  }

  /** Drops queued records that can never be sent (counted as drained with a 400). */
  private void drop(List<QueuedRecord> records, String why) {
    split.consumed(records.size());
    queue.ack(records);
    ctx.observer.drained(tenant, records.size(), series(records), new AttemptOutcome(400, why, -1));
  }

  private static void release(List<QueuedRecord> records) {
    for (QueuedRecord r : records) {
      r.payload().release();
    }
  }

  /** Queue mode, after a restart: starts sending what the queue holds. */
  void resume() {
    drain(now());
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
    spillTimer.cancel();
    while (!pending.isEmpty()) {
      Fragment f = pending.poll();
      finish(f, FragmentOutcome.shuttingDown(f.attempts));
    }
  }

  /** Queue mode: a direct send of the lane, from the moment it goes until its answer. */
  private static final class DirectSend {
    final List<Fragment> batch;

    /** When it spills if not answered 2xx by then. */
    final long spillAt;

    /** Its fragments were appended to the queue; their appends, in batch order. */
    boolean spilled;

    List<CompletableFuture<TenantQueue.Position>> appends = List.of();

    /** Its downstream answer once back, else {@code null}. */
    AttemptOutcome outcome;

    DirectSend(List<Fragment> batch, long spillAt) {
      this.batch = batch;
      this.spillAt = spillAt;
    }

    void back(AttemptOutcome o) {
      outcome = o;
    }
  }
}
