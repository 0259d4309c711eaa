package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.queue.QueueFullException;
import io.prwrelay.server.queue.QueuedRecord;
import io.prwrelay.server.queue.TenantQueue;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Queue mode: a lane's use of its tenant's {@link TenantQueue}. Appends fragments, each answered
 * {@link FragmentOutcome.Kind#QUEUED} once fsync'd (503 when the disk refuses it), and drains the
 * queue in order, one downstream request at a time, merging the records waiting at the head into
 * one request of at most {@code batchMaxBytes} ({@link RequestBody#ofRecords}).
 *
 * <p>The answer to a drained request decides: a 2xx acknowledges its records; a non-retriable 4xx
 * drops a record sent alone (counted) and makes merged records go again in halves ({@link
 * Bisection.Records}); a 429, 5xx or no answer keeps them and backs the lane off ({@link
 * #backOff}), after which it reads one record at a time until a send succeeds. A record that cannot
 * be made into a request (one the relay could not have written, or a PRW 2.0 batch without a PRW
 * 1.0 form for a downstream that takes only 1.0) is dropped alone, counted. Whether the lane drains
 * at all is its {@link DirectSpill}'s decision ({@link DirectSpill#drain}); this class tells it
 * when the queue is empty and when a send carries all that is queued. Touched only on the lane's
 * loop; the queue completes its futures elsewhere, and their results come back to the loop.
 */
final class QueueDrain {
  private final Lane lane;
  private final DirectSpill route;
  private final LaneContext ctx;
  private final EventLoop loop;
  private final SendSlots slots;
  private final TenantQueue queue;
  private final Health health;
  private final LaneTimer wake;

  /** Appends not yet fsync'd. */
  private int appending;

  /**
   * The gate let this lane make its tenant's queue ({@link NewQueueGate}): later fragments need no
   * leave while the first one's append is still under way.
   */
  private boolean admitted;

  /** A read of the queue is under way. */
  private boolean reading;

  /** The pieces of a rejected merged read still to send ({@link Bisection}). */
  private final Bisection.Records split = new Bisection.Records();

  private final Runnable resume;

  /**
   * @param wake the lane's timer, which pumps (and so drains) the lane when it fires
   */
  QueueDrain(
      Lane lane,
      DirectSpill route,
      LaneContext ctx,
      EventLoop loop,
      SendSlots slots,
      TenantQueue queue,
      Health health,
      LaneTimer wake) {
    this.lane = lane;
    this.route = route;
    this.ctx = ctx;
    this.loop = loop;
    this.slots = slots;
    this.queue = queue;
    this.health = health;
    this.wake = wake;
    this.resume = () -> route.drain(lane.now());
  }

  /** True when the queue holds no record. */
  boolean isEmpty() {
    return queue.isEmpty();
  }

  /** Appends not yet fsync'd. */
  int appending() {
    return appending;
  }

  /** True when nothing is queued, appended or read. */
  boolean idle() {
    return appending == 0 && !reading && queue.isEmpty();
  }

  /**
   * Appends the fragment's snappy block to the queue, as it will be sent (or joined with the blocks
   * next to it); the fragment is answered once the append is done, and the lane drains.
   *
   * @return the append, failed when the fragment could not even be compressed (answered then)
   */
  CompletableFuture<TenantQueue.Position> append(Fragment f) {
    try {
      f.compress(ctx.alloc); // a no-op for fragments that came through Lanes
    } catch (RuntimeException | Error e) {
      lane.finish(f, FragmentOutcome.cannotCompress(e, 0));
      return CompletableFuture.failedFuture(e);
    }
    if (!admitted && !queue.created()) {
      NewQueueGate.Refusal refusal = ctx.newQueues.admit(f);
      if (refusal != null) {
        ctx.observer.queueRefused(lane.tenant(), refusal.bound(), f.series());
        lane.finish(f, refusal.outcome());
        return CompletableFuture.failedFuture(new IOException(refusal.outcome().message()));
      }
      admitted = true;
    }
    appending++;
    // The fragment keeps its block until appended() completes it, after the queue is done with it.
    CompletableFuture<TenantQueue.Position> appended =
        queue.appendAt(
            f.compressed(), f.series(), f.protocol() == Protocol.V2, ctx.wallMillis.getAsLong());
    appended.whenComplete((ok, error) -> loop.execute(() -> appended(f, error)));
    return appended;
  }

  private void appended(Fragment f, Throwable error) {
    appending--;
    Throwable cause = error == null || error.getCause() == null ? error : error.getCause();
    if (cause == null) {
      lane.finish(f, FragmentOutcome.queued());
    } else if (cause instanceof QueueFullException full) {
      ctx.observer.queueRefused(lane.tenant(), full.bound().label(), f.series());
      lane.finish(f, FragmentOutcome.queueFull(full));
    } else {
      lane.finish(f, FragmentOutcome.notQueued(cause));
    }
    route.drain(lane.now());
  }

  /**
   * Acknowledges the records appended for spilled direct sends that were delivered, unless an older
   * record of the tenant is still queued: then they are sent again (at-least-once). Runs {@code
   * then} on the loop once done, whether anything was acknowledged or not.
   *
   * @param delivered consecutive spilled sends, in the order they went, every append done
   */
  void ackDelivered(List<DirectSpill.Send> delivered, Runnable then) {
    TenantQueue.Position first = null;
    TenantQueue.Position last = null;
    long records = 0;
    long series = 0;
    for (DirectSpill.Send d : delivered) {
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
        series += d.batch.get(i).series();
      }
    }
    if (lane.closed() || first == null) {
      then.run();
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
                      if (error == null && acked) {
                        ctx.observer.drained(lane.tenant(), n, s, o);
                      }
                      then.run();
                    }));
  }

  /** Whether the connection of the read or send out was taken as an unproven lane's. */
  private boolean takenUnproven;

  /**
   * Reads the records at the head and sends them, once the lane may: not while its state holds it
   * back, nor while every connection of the loop is busy (it waits in {@link SendSlots}). Call only
   * when nothing else of the lane is out ({@link DirectSpill#drain}).
   *
   * @param granted a connection was set aside for this lane ({@link SendSlots})
   */
  void next(long now, boolean granted) {
    if (reading) {
      return;
    }
    if (queue.isEmpty()) {
      split.clear(); // records dropped by the queue's bounds meanwhile
      route.caughtUp(now);
      return;
    }
    if (health.holdsBack(now)) {
      wake.set(health.heldUntil(), now);
      return;
    }
    if (!granted && !slots.free(lane.unproven())) {
      slots.await(lane);
      return;
    }
    // The connection is counted from the read on, so that lanes reading at once stay within them.
    // One read or send of the drain is out at a time: the field says how its connection was taken.
    takenUnproven = lane.unproven();
    slots.take(takenUnproven);
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
        slots.release(takenUnproven);
      }
    }
  }

  /** Sends what a queue read returned; false when nothing was sent. */
  private boolean readAndSend(List<QueuedRecord> records, Throwable error) {
    if (lane.closed()) {
      if (records != null) {
        release(records);
      }
      return false;
    }
    long now = lane.now();
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
      route.caughtUp(now);
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
              ctx.settings.haLabels(),
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
      loop.execute(resume); // hands the connection on before looking at the queue again
      return false;
    } catch (Error e) {
      // Memory ran out building the body (what was allocated for it is released): nothing is
      // dropped, and the records are read again once the lane's backoff is over.
      release(records);
      health.on(
          Health.Event.READ_FAILED, "cannot build a request of the tenant's queue: " + e, -1, now);
      wake.set(health.heldUntil(), now);
      return false;
    }
    List<QueuedRecord> batch = records.subList(0, body.records());
    if (body.unconvertible() != null) {
      release(records);
      drop(batch, "queued PRW 2.0 batch cannot be converted to 1.0: " + body.unconvertible());
      loop.execute(resume); // hands the connection on before looking at the queue again
      return false;
    }
    if (queue.records() <= batch.size()) {
      route.lastRecordsSent();
    }
    if (split.active()) {
      ctx.observer.splitSend(lane.tenant(), batch.size());
    }
    lane.sendStarted(now);
    Protocol protocol = body.protocol();
    ByteBuf content = body.content();
    Future<AttemptOutcome> result =
        ctx.sender.send(
            loop,
            lane.tenant(),
            protocol,
            // Records at the head of a failing queue go one at a time: its consecutive failures
            // are their retries.
            health.failures(),
            content,
            ctx.attemptTimeoutNanos);
    result.addListener(
        x -> {
          content.release();
          release(records);
          try {
            sent(batch, protocol, result.getNow(), now);
          } finally {
            slots.release(takenUnproven);
          }
        });
    return true;
  }

  private void sent(List<QueuedRecord> records, Protocol sent, AttemptOutcome o, long started) {
    long now = lane.ended(records.size(), o, started);
    if (!lane.closed() && ctx.protocol.fallsBackOn(sent, o)) {
      // The records stay at the head and are read again, converted to PRW 1.0.
      ctx.protocol.fallBack(o);
      route.drain(now);
      return;
    }
    if (!o.success() && !o.retriable() && records.size() > 1 && !o.overTenantLimit()) {
      // Rejected as a whole: the records stay, read again in halves, and only one rejected alone
      // is dropped (Bisection). After a shutdown they wait for the next start, merged again. Not
      // after a tenant limit, which was written up to the limit and has no bad record to find.
      split.rejected(records.size());
      route.drain(now);
      return;
    }
    if (o.success() || !o.retriable()) {
      split.consumed(records.size());
      queue.ack(records);
      ctx.observer.drained(lane.tenant(), records.size(), series(records), o);
      if (!o.success()) {
        health.on(Health.Event.REJECTED, o.describe(), -1, now);
      }
      route.drain(now);
      return;
    }
    if (lane.closed()) {
      return; // the records stay queued for the next start
    }
    route.drainFailed();
    backOff(o, series(records), now);
  }

  /**
   * After a 429, 5xx or no answer to a send of {@code series} series (drained, or direct): backs
   * the lane off ({@link Health}: throttled for a 429, those series counted as throttled, one
   * record per request until a send succeeds), and drains again once the backoff ends.
   */
  void backOff(AttemptOutcome o, long series, long now) {
    if (o.status() == 429) {
      ctx.observer.throttledQueued(lane.tenant(), series, o);
    }
    long delay =
        health.on(
            o.status() == 429 ? Health.Event.THROTTLED : Health.Event.FAILED,
            o.describe(),
            o.retryAfterMillis(),
            now);
    long t = lane.now();
    wake.set(t + delay, t);
  }

  /** Drops queued records that can never be sent (counted as drained with a 400). */
  private void drop(List<QueuedRecord> records, String why) {
    split.consumed(records.size());
    queue.ack(records);
    ctx.observer.drained(
        lane.tenant(), records.size(), series(records), new AttemptOutcome(400, why, -1));
  }

  private static long series(List<QueuedRecord> records) {
    long n = 0;
    for (QueuedRecord r : records) {
      n += r.series();
    }
    return n;
  }

  private static void release(List<QueuedRecord> records) {
    for (QueuedRecord r : records) {
      r.payload().release();
    }
  }
}
