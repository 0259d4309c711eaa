package io.prwrelay.server.lane;

import io.netty.channel.EventLoop;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.queue.TenantQueue;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Queue mode: which way a lane's new fragments go ({@link Route}, drawn in the package
 * documentation), its direct sends until they are answered, and the spill of what it holds in
 * memory to its queue ({@link QueueDrain}).
 *
 * <p>A caught-up lane sends directly, as in sync mode: a 2xx answers the fragments {@link
 * FragmentOutcome.Kind#DELIVERED} without touching the disk, a non-retriable 4xx {@link
 * FragmentOutcome.Kind#REJECTED}. Any other answer, or none within the direct timeout ({@link
 * LaneContext#directNanos}), spills the lane: the fragments of its direct sends still out (in the
 * order they went) and every fragment waiting are appended to the queue, and every fragment after
 * them too until the queue is drained empty. No queued record is sent while a direct send is out;
 * once all spilled sends are back, the records of those delivered are acknowledged, in order, up to
 * the first that was not (the rest are sent again: at-least-once). Touched only on the lane's loop.
 */
final class DirectSpill {
  /** Where a queue-mode lane's new fragments go. */
  enum Route {
    /** Caught up: new fragments wait in memory and are sent directly, as in sync mode. */
    DIRECT,
    /** The queue holds a backlog (or direct delivery is off): new fragments are appended to it. */
    DRAINING,
    /**
     * The queue's last records are being sent: new fragments wait in memory, until their spill
     * time, to be sent directly once the queue is empty.
     */
    CATCHING_UP
  }

  private final Lane lane;
  private final LaneContext ctx;
  private final EventLoop loop;
  private final Pending pending;
  private final Health health;
  private final QueueDrain queue;

  /** Spills the oldest direct send or waiting fragment not answered in time. */
  private final LaneTimer timer;

  private Route route;

  /** Direct sends not answered yet, in the order they were sent. */
  private final ArrayDeque<Send> out = new ArrayDeque<>();

  /** Direct sends spilled to the queue, in the order they went, until all are back. */
  private final List<Send> spilled = new ArrayList<>();

  /** Acknowledgements of records that spilled direct sends delivered, under way. */
  private int acking;

  /** Run once an acknowledgement of spilled sends is done. */
  private final Runnable acked;

  /**
   * @param pending the lane's waiting fragments
   * @param wake the lane's timer, which pumps (and so drains) the lane when it fires
   */
  DirectSpill(
      Lane lane,
      LaneContext ctx,
      EventLoop loop,
      SendSlots slots,
      TenantQueue queue,
      Pending pending,
      Health health,
      LaneTimer wake) {
    this.lane = lane;
    this.ctx = ctx;
    this.loop = loop;
    this.pending = pending;
    this.health = health;
    this.queue = new QueueDrain(lane, this, ctx, loop, slots, queue, health, wake);
    this.timer = new LaneTimer(loop, this::onTimer);
    this.acked =
        () -> {
          acking--;
          drain(lane.now());
        };
    this.route = ctx.directNanos == 0 || !queue.isEmpty() ? Route.DRAINING : Route.DIRECT;
  }

  Route route() {
    return route;
  }

  /** True when nothing is queued, appended, read or acknowledged. */
  boolean idle() {
    return acking == 0 && queue.idle();
  }

  /**
   * Takes a fragment: appends it while the lane drains a backlog; else keeps it for a direct send
   * (or, catching up, until the queue is empty), and spills everything when the lane holds more
   * than {@code maxPendingBytes}.
   */
  void offer(Fragment f, long now) {
    if (route == Route.DRAINING) {
      queue.append(f);
      return;
    }
    f.queuedAt(now);
    pending.add(f);
    if (pending.size() > 1 && pending.bytes() > ctx.settings.maxPendingBytes()) {
      spill();
      return;
    }
    schedule(now);
    lane.pumpSoon();
  }

  /**
   * Sends the records at the head of the queue unless the lane is caught up, closed, or has a
   * direct send (or the acknowledgement of one) out: no queued record goes meanwhile.
   *
   * @param granted a connection was set aside for this lane ({@link SendSlots})
   */
  void drain(long now, boolean granted) {
    if (lane.closed() || route == Route.DIRECT || lane.inFlight() > 0 || acking > 0) {
      return;
    }
    queue.next(now, granted);
  }

  void drain(long now) {
    drain(now, false);
  }

  /** A direct send of {@code batch} goes out at {@code now}: it spills if not answered in time. */
  Send sent(List<Fragment> batch, long now) {
    Send d = new Send(batch, spillAt(batch, now));
    out.add(d);
    return d;
  }

  /**
   * A direct send came back. Not spilled yet: a 2xx, a non-retriable 4xx, a fall-back to PRW 1.0 or
   * a shutdown is settled as in sync mode ({@link Lane#outcome}); anything else spills it (with
   * every other direct send and fragment waiting) and backs the lane off. Spilled already: its
   * fragments are answered by their appends, and once every spilled send is back the records of
   * those answered 2xx are acknowledged ({@link #settleSpilled}), so that they are not sent again.
   */
  void answered(Send d, Protocol sent, AttemptOutcome o, long started) {
    if (!d.spilled
        && (o.success() || !o.retriable() || lane.closed() || ctx.protocol.fallsBackOn(sent, o))) {
      out.remove(d);
      lane.outcome(d.batch, sent, o, started);
      return;
    }
    long now = lane.ended(d.batch.size(), o, started);
    if (d.spilled) {
      out.remove(d);
      spilledAnswered(d, o, now);
      return;
    }
    spill(); // every direct send still out, this one included, in the order they went
    out.remove(d);
    d.outcome = o;
    queue.backOff(o, series(d.batch), now);
    settleSpilled(now);
  }

  /** A spilled direct send came back; its fragments are answered by their appends. */
  private void spilledAnswered(Send d, AttemptOutcome o, long now) {
    if (lane.closed()) {
      return; // its records stay queued for the next start (at-least-once)
    }
    d.outcome = o;
    if (!o.success() && o.retriable()) {
      queue.backOff(o, series(d.batch), now);
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
    for (Send d : spilled) {
      if (d.outcome == null) {
        return; // the queue waits for it: nothing queued goes while a direct send is out
      }
    }
    List<Send> delivered = new ArrayList<>(spilled.size());
    for (Send d : spilled) {
      if (!d.outcome.success()) {
        break;
      }
      delivered.add(d);
    }
    spilled.clear();
    if (delivered.isEmpty()) {
      drain(now);
      return;
    }
    acking++;
    List<CompletableFuture<TenantQueue.Position>> appends = new ArrayList<>();
    for (Send d : delivered) {
      appends.addAll(d.appends);
    }
    CompletableFuture.allOf(appends.toArray(new CompletableFuture<?>[0]))
        .whenComplete((x, e) -> loop.execute(() -> queue.ackDelivered(delivered, acked)));
  }

  /**
   * From now on the lane queues ({@link Route#DRAINING}). Appends, in this order, the fragments of
   * the direct sends still out (in the order they went; their outcomes no longer answer them) and
   * every fragment waiting in memory; each is answered once fsync'd.
   */
  private void spill() {
    route = Route.DRAINING;
    for (Send d : out) {
      if (!d.spilled) {
        d.spilled = true;
        spilled.add(d);
        d.appends = new ArrayList<>(d.batch.size());
        for (Fragment f : d.batch) {
          d.appends.add(queue.append(f));
        }
      }
    }
    while (!pending.isEmpty()) {
      queue.append(pending.poll());
    }
  }

  /**
   * A drained send carries all that is queued: new fragments wait in memory for it ({@link
   * Route#CATCHING_UP}), and go directly once the queue is empty.
   */
  void lastRecordsSent() {
    if (ctx.directNanos > 0 && route == Route.DRAINING) {
      route = Route.CATCHING_UP;
    }
  }

  /** A drained send failed: what waits in memory for the queue to empty goes behind its records. */
  void drainFailed() {
    if (route == Route.CATCHING_UP) {
      spill();
    }
  }

  /**
   * The queue is empty and nothing of the lane is out. Once the last appends are done (meanwhile
   * new fragments wait in memory) and no backoff is running, the lane sends directly again.
   */
  void caughtUp(long now) {
    if (ctx.directNanos == 0 || lane.closed() || route == Route.DIRECT) {
      return;
    }
    if (health.holdsBack(now)) {
      return;
    }
    if (queue.appending() > 0) {
      route = Route.CATCHING_UP; // appended() drains again once they are on disk
      schedule(now);
      return;
    }
    route = Route.DIRECT;
    if (!pending.isEmpty()) {
      lane.pump(now);
    }
  }

  /** Times the spill of the oldest direct send or waiting fragment. */
  void schedule(long now) {
    if (ctx.directNanos == 0 || route == Route.DRAINING || lane.closed()) {
      return;
    }
    long at = nextSpill();
    if (at != Long.MAX_VALUE) {
      timer.atMost(at, now);
    }
  }

  private void onTimer() {
    if (lane.closed() || route == Route.DRAINING) {
      return;
    }
    long now = lane.now();
    long at = nextSpill();
    if (at != Long.MAX_VALUE && now - at >= 0) {
      spill(); // no answer within the spill delay: the sender gets its answer from the disk
    } else {
      schedule(now);
    }
  }

  /** Spill time of the oldest direct send not spilled or fragment waiting, or MAX_VALUE. */
  private long nextSpill() {
    long at = Long.MAX_VALUE;
    Send first = out.peekFirst();
    if (first != null && !first.spilled) {
      at = first.spillAt;
    }
    if (!pending.isEmpty()) {
      at = Math.min(at, spillAt(pending.peek()));
    }
    return at;
  }

  /**
   * When a fragment waiting in memory goes to the queue instead: half-way to its request's deadline
   * while it waits for a connection, as sync mode's fragments do (only the downstream's answer is
   * timed); while the lane catches up, after the direct timeout, since it waits only for the queue.
   */
  private long spillAt(Fragment f) {
    long halfway = halfwayToDeadline(f);
    return route == Route.CATCHING_UP
        ? Math.min(halfway, f.queuedNanos() + ctx.directNanos)
        : halfway;
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
    return f.queuedNanos() + Math.max(0, f.deadlineNanos() - f.queuedNanos()) / 2;
  }

  private static long series(List<Fragment> batch) {
    long n = 0;
    for (int i = 0; i < batch.size(); i++) {
      n += batch.get(i).series();
    }
    return n;
  }

  /** The lane closes: no more spills. */
  void close() {
    timer.cancel();
  }

  /** A direct send of the lane, from the moment it goes until its answer. */
  static final class Send {
    final List<Fragment> batch;

    /** When it spills if not answered 2xx by then. */
    final long spillAt;

    /** Its fragments were appended to the queue; their appends, in batch order. */
    boolean spilled;

    List<CompletableFuture<TenantQueue.Position>> appends = List.of();

    /** Its downstream answer once back, else {@code null}. */
    AttemptOutcome outcome;

    Send(List<Fragment> batch, long spillAt) {
      this.batch = batch;
      this.spillAt = spillAt;
    }
  }
}
