package io.prwrelay.server.lane;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.prwrelay.server.protocol.Protocol;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The lanes of one event loop, created on a tenant's first fragment and forgotten when idle, and
 * (sync mode) the {@link Delegate}s of tenants whose lanes live on other loops and let this one
 * send for them. It runs the loop's periodic work: the sweep of idle lanes, and on the first loop
 * in queue mode the expiry of queued records past their age bound. Touched only on its loop, but
 * for {@link #hand} and {@link #stopExpiring}.
 */
final class LaneShard {
  /** Index of the loop among the lanes' loops. */
  final int index;

  final EventLoop loop;

  /** The loop's connections, shared by its lanes and delegates. */
  final SendSlots slots;

  private final LaneContext ctx;
  private final DelegationMessages messages;

  /** Lanes of every loop, bounded by {@link LaneSettings#maxLanes()}. */
  private final LaneCount count;

  /**
   * In access order, least recently used first: the first idle lane {@link #evictOne} meets is the
   * one its tenant used longest ago, not whichever the hash order puts first (which could be a busy
   * tenant's lane between two sends).
   */
  private final Map<String, Lane> byTenant = new LinkedHashMap<>(16, 0.75f, true);

  /**
   * Sync mode: tenants whose lane lives on another loop and said they are healthy ({@link
   * Delegations}): their large fragments routed on this loop are sent from here.
   */
  private final Map<String, Delegate> remotes = new HashMap<>();

  private ScheduledFuture<?> sweeper;

  /** Queue mode, on the first loop: drops queued records past their age bound; else null. */
  private ScheduledFuture<?> expirer;

  /** How often queued records past their age bound are dropped (queue mode). */
  static final long EXPIRE_INTERVAL_SECONDS = 10;

  /**
   * @param connections sends this loop can have on the wire at once
   * @param count the lanes of every loop
   */
  LaneShard(
      int index,
      EventLoop loop,
      int connections,
      LaneContext ctx,
      DelegationMessages messages,
      LaneCount count) {
    this.index = index;
    this.loop = loop;
    this.slots = new SendSlots(connections);
    this.ctx = ctx;
    this.messages = messages;
    this.count = count;
  }

  /** Forgets idle lanes every {@code everyNanos}. */
  void sweepEvery(long everyNanos) {
    sweeper =
        loop.scheduleWithFixedDelay(this::sweep, everyNanos, everyNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Queue mode: drops the records of every tenant's queue past their age bound every {@value
   * #EXPIRE_INTERVAL_SECONDS} seconds, from this loop.
   */
  void expireQueues() {
    expirer =
        loop.scheduleWithFixedDelay(
            () -> ctx.store.expire(ctx.wallMillis.getAsLong()),
            EXPIRE_INTERVAL_SECONDS,
            EXPIRE_INTERVAL_SECONDS,
            TimeUnit.SECONDS);
  }

  /** Stops {@link #expireQueues}; may be called from any thread (shutdown). */
  void stopExpiring() {
    if (expirer != null) {
      expirer.cancel(false);
    }
  }

  /**
   * Hands fragments to this loop's lanes, from any thread; when the loop no longer takes tasks they
   * are answered 503.
   */
  void hand(List<Fragment> fragments) {
    if (loop.inEventLoop()) {
      offerAll(fragments);
      return;
    }
    try {
      loop.execute(() -> offerAll(fragments));
    } catch (RejectedExecutionException shuttingDown) {
      for (Fragment f : fragments) {
        ctx.finish(f, FragmentOutcome.shuttingDown());
      }
    }
  }

  /** Queue mode, at start: the tenant's queue holds records, so its lane starts draining them. */
  void resume(String tenant) {
    Lane lane = lane(tenant);
    if (lane != null) {
      lane.resume();
    }
  }

  /** Hands each fragment to its tenant's lane; one without a lane (no room) is answered 503. */
  void offerAll(List<Fragment> fragments) {
    for (int i = 0; i < fragments.size(); i++) {
      offer(fragments.get(i));
    }
  }

  /**
   * Offers {@code f} to its tenant's lane; answers it 503 when the tenant has no lane and its
   * sender may open no new one now ({@link NewLaneBudget}), or there is no room for one.
   */
  void offer(Fragment f) {
    Lane lane = byTenant.get(f.tenant());
    if (lane == null) {
      long wait = ctx.newLanes.take(f.sender(), loop.ticker().nanoTime());
      if (wait > 0) {
        ctx.finish(f, ctx.newLanes.refusal(wait));
        return;
      }
      lane = lane(f.tenant());
    }
    if (lane == null) {
      ctx.finish(f, FragmentOutcome.noRoom(ctx.settings.maxLanes()));
    } else {
      lane.offer(f);
    }
  }

  /**
   * The tenant's lane, created when it has none; {@code null} when {@code maxLanes} lanes exist and
   * none of this loop is idle.
   */
  Lane lane(String tenant) {
    Lane lane = byTenant.get(tenant);
    if (lane != null) {
      return lane;
    }
    // A place is taken before the lane is made, or handed over from the lane evicted for it: the
    // count never passes the bound, whatever the other loops do meanwhile.
    if (!count.tryTake() && !evictOne()) {
      return null;
    }
    lane = new Lane(tenant, ctx, loop, slots, messages, index);
    byTenant.put(tenant, lane);
    ctx.observer.laneCreated(tenant);
    return lane;
  }

  /**
   * Forgets the longest-idle lane of this loop that holds nothing, its place going to the lane made
   * next; false when there is none.
   */
  private boolean evictOne() {
    long now = loop.ticker().nanoTime();
    String victim = null;
    for (Lane l : byTenant.values()) {
      if (l.idleSince(now, 0)) {
        victim = l.tenant();
        break;
      }
    }
    if (victim == null) {
      return false;
    }
    byTenant.remove(victim).withdraw();
    release(victim);
    ctx.observer.laneForgotten(victim);
    return true;
  }

  private void sweep() {
    long now = loop.ticker().nanoTime();
    long idle = ctx.settings.idleTimeout().toNanos();
    for (Iterator<Lane> it = byTenant.values().iterator(); it.hasNext(); ) {
      Lane lane = it.next();
      if (lane.idleSince(now, idle)) {
        it.remove();
        lane.withdraw();
        count.give();
        release(lane.tenant());
        ctx.observer.laneForgotten(lane.tenant());
      }
    }
  }

  /** Lets the store forget the queue of a forgotten lane's tenant if it holds nothing. */
  private void release(String tenant) {
    if (ctx.store != null) {
      ctx.store.release(tenant);
    }
  }

  /**
   * Sends a large fragment of a tenant whose lane lives on another loop from here, when that lane
   * said it may be ({@link Delegate}); false when it goes to its lane.
   */
  boolean sentFromHere(Fragment f) {
    // Large means compressed on the calling thread; a small body forwarded as it came is a block
    // too, and goes to its lane like any small batch.
    if (f.compressed() == null
        || f.size() < FragmentCompression.IN_LANE_BELOW
        || f.protocol() != Protocol.V1) {
      return false;
    }
    Delegate d = remotes.get(f.tenant());
    return d != null && d.take(f);
  }

  /** The tenant's lane said this loop may send its large fragments (announce). */
  void announced(String tenant) {
    remotes.computeIfAbsent(tenant, t -> new Delegate(t, ctx, loop, slots, messages, index));
  }

  /** The tenant's lane takes its fragments back (withdraw). */
  void withdrawn(String tenant) {
    Delegate d = remotes.remove(tenant);
    if (d != null) {
      d.withdraw();
    }
  }

  /** A delegate that ended itself after a failure (fail). */
  void dropDelegate(String tenant, Delegate d) {
    remotes.remove(tenant, d);
  }

  /** Stops sweeping and closes every delegate and lane (shutdown). */
  void close() {
    sweeper.cancel(false);
    for (Delegate d : remotes.values()) {
      d.close();
    }
    remotes.clear();
    // A copy: a lane that answers its fragments may start another request's routing on this loop,
    // and a lookup reorders an access-ordered map.
    for (Lane l : List.copyOf(byTenant.values())) {
      l.close();
    }
  }
}
