package io.prwrelay.server.lane;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.prwrelay.core.remotewrite.SeededHash;
import io.prwrelay.server.config.DownstreamConfig.ProtocolMode;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.downstream.TenantSender;
import io.prwrelay.server.queue.TenantQueue;
import io.prwrelay.server.queue.TenantQueues;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The tenant lanes of the relay: one {@link Lane} per tenant, each living on one event loop chosen
 * by the tenant's hash, so a lane's state needs no lock. Fragments may be submitted from any
 * thread; they are handed to their lane's loop, and their listeners are called there.
 *
 * <p>In sync mode a lane may let other loops send its tenant's large fragments themselves while the
 * tenant is healthy (see {@link #submit}); the lane still decides every outcome other than a 2xx or
 * a non-retriable 4xx, and takes the permission back when it backs off or is forgotten. The
 * messages between loops for that are {@link DelegationMessages}'; each loop's lanes, delegates and
 * periodic work are its {@link LaneShard}'s; fragments are compressed before they go by {@link
 * FragmentCompression}.
 *
 * <p>Lanes are created on a tenant's first fragment and forgotten after {@link
 * LaneSettings#idleTimeout()} without work and without a backoff in force. At most {@link
 * LaneSettings#maxLanes()} exist; a new tenant beyond that evicts the longest-idle lane of its
 * loop, or, when none is idle, gets 503.
 */
public final class Lanes implements AutoCloseable {
  private final LaneContext ctx;
  private final LaneShard[] shards;
  private final LaneCount count;
  private final DelegationMessages messages;
  private final FragmentCompression compression;

  /**
   * The queue side of queue mode.
   *
   * @param store the tenants' queues: a {@link io.prwrelay.server.queue.QueueStore} on disk
   * @param wallMillis wall clock for the age of queued records
   * @param maxDecompressedBytes cap when merging queued records
   * @param directTimeout how long a caught-up lane's fragment may wait for its direct delivery
   *     before it goes to the queue; zero queues every fragment
   * @param newQueues how many tenant queues may be made on disk ({@link NewQueueGate})
   */
  public record Queues(
      TenantQueues store,
      LongSupplier wallMillis,
      int maxDecompressedBytes,
      Duration directTimeout,
      NewQueueGate newQueues) {
    /** Queues through which every fragment goes (no direct delivery), making queues unbounded. */
    public Queues(TenantQueues store, LongSupplier wallMillis, int maxDecompressedBytes) {
      this(store, wallMillis, maxDecompressedBytes, Duration.ZERO);
    }

    /** Queues making tenant queues on disk unbounded. */
    public Queues(
        TenantQueues store,
        LongSupplier wallMillis,
        int maxDecompressedBytes,
        Duration directTimeout) {
      this(store, wallMillis, maxDecompressedBytes, directTimeout, NewQueueGate.UNBOUNDED);
    }

    /**
     * Queues making at most {@code newPerRequest} tenant queues for one sender request and {@code
     * newPerSecond} a second ({@link NewQueueGate}).
     */
    public Queues(
        TenantQueues store,
        LongSupplier wallMillis,
        int maxDecompressedBytes,
        Duration directTimeout,
        int newPerRequest,
        int newPerSecond) {
      this(
          store,
          wallMillis,
          maxDecompressedBytes,
          directTimeout,
          NewQueueGate.of(newPerRequest, newPerSecond));
    }
  }

  /**
   * Lanes in sync mode when {@code queues} is null; in queue mode otherwise: a lane whose queue is
   * caught up sends its fragments directly and queues them on disk only when they are not delivered
   * within {@link Queues#directTimeout()}; a lane with a backlog queues every fragment and drains
   * its tenant's queue; lanes of tenants whose queues hold records (after a restart) start draining
   * at once.
   *
   * @param loops the event loops lanes live on (the loops of the downstream connection pools)
   */
  public Lanes(
      Iterable<? extends EventExecutor> loops,
      LaneSettings settings,
      TenantSender sender,
      ByteBufAllocator alloc,
      LaneObserver observer,
      Queues queues) {
    this(loops, settings, sender, alloc, observer, queues, new DownstreamProtocol(ProtocolMode.V1));
  }

  /**
   * Lanes as {@link #Lanes(Iterable, LaneSettings, TenantSender, ByteBufAllocator, LaneObserver,
   * Queues)}, sending PRW 2.0 fragments in the version {@code protocol} says.
   */
  public Lanes(
      Iterable<? extends EventExecutor> loops,
      LaneSettings settings,
      TenantSender sender,
      ByteBufAllocator alloc,
      LaneObserver observer,
      Queues queues,
      DownstreamProtocol protocol) {
    this.ctx = new LaneContext(settings, sender, alloc, observer, queues, protocol);
    this.count = new LaneCount(settings.maxLanes());
    this.compression = new FragmentCompression(ctx);
    List<EventLoop> list = new ArrayList<>();
    for (EventExecutor e : loops) {
      list.add((EventLoop) e);
    }
    if (list.isEmpty()) {
      throw new IllegalArgumentException("no event loop for the lanes");
    }
    this.shards = new LaneShard[list.size()];
    this.messages = new DelegationMessages(shards, ctx);
    for (int i = 0; i < shards.length; i++) {
      EventLoop loop = list.get(i);
      shards[i] = new LaneShard(i, loop, sender.connections(loop), ctx, messages, count);
    }
    long sweepNanos = Math.max(TimeUnit.SECONDS.toNanos(1), settings.idleTimeout().toNanos() / 2);
    for (LaneShard s : shards) {
      s.sweepEvery(sweepNanos);
    }
    if (queues != null) {
      for (TenantQueue q : queues.store().queues()) {
        if (!q.isEmpty()) {
          LaneShard s = shards[shardOf(q.tenant())];
          s.loop.execute(() -> s.resume(q.tenant()));
        }
      }
      shards[0].expireQueues();
    }
  }

  /**
   * Bounds the new lanes each sender may cause ({@code relay.lanes.new-per-sender-*}); every sender
   * may make every lane it needs until this is called. Call before the first fragment.
   */
  public void limitNewLanes(NewLaneBudget budget) {
    ctx.newLanes = budget;
  }

  /** Lanes that exist now. */
  public int size() {
    return count.get();
  }

  /**
   * Compresses each fragment that is not small on the calling thread, then hands it to its tenant's
   * lane. May be called from any thread.
   *
   * <p>In sync mode, a large fragment routed on one of the lanes' loops whose tenant's lane lives
   * on another loop is sent from the routing loop, over its own connections, while that lane says
   * the tenant is healthy ({@link Delegations}) and the tenant has fewer than {@link
   * LaneSettings#maxConcurrentSends()} such sends from this loop on the wire: a 2xx or a
   * non-retriable 4xx answers it here; anything else hands it to the lane, which retries or answers
   * it as if it had sent it. Small fragments always go to their lane, where they are coalesced.
   *
   * @param fragments takes ownership of every fragment; the list is read, never changed (its {@link
   *     SenderRequest} reports it once every fragment has its outcome)
   */
  public void submit(List<Fragment> fragments) {
    fragments = compression.compressed(fragments);
    if (fragments.isEmpty()) {
      return;
    }
    if (shards.length == 1) {
      shards[0].hand(fragments);
      return;
    }
    LaneShard from = ctx.store == null ? callingShard() : null;
    @SuppressWarnings("unchecked")
    List<Fragment>[] byShard = new List[shards.length];
    for (int j = 0; j < fragments.size(); j++) {
      Fragment f = fragments.get(j);
      int i = shardOf(f.tenant());
      if (from != null) {
        if (i == from.index) {
          // This loop's own lanes take it now: no list to hand over (one per request showed in
          // the allocation profile).
          from.offer(f);
          continue;
        }
        if (from.sentFromHere(f)) {
          continue;
        }
        f.handedFrom(from.index);
      }
      if (byShard[i] == null) {
        byShard[i] = new ArrayList<>();
      }
      byShard[i].add(f);
    }
    for (int i = 0; i < shards.length; i++) {
      if (byShard[i] != null) {
        shards[i].hand(byShard[i]);
      }
    }
  }

  /** The shard whose loop runs the caller, or {@code null}. */
  private LaneShard callingShard() {
    for (LaneShard s : shards) {
      if (s.loop.inEventLoop()) {
        return s;
      }
    }
    return null;
  }

  /**
   * Reads the key the downstream judges the fragment by ({@link
   * io.prwrelay.core.remotewrite.HaLabels}) from its uncompressed body, for a caller about to
   * replace that body by the sender's snappy block ({@link Fragment#forwardAs}): {@link #submit}
   * would otherwise read it from the start of the block, decompressing it again.
   */
  public void readHaKey(Fragment f) {
    compression.readHaKey(f);
  }

  /**
   * The loop of {@code tenant}'s lane. Seeded: with {@code String.hashCode}, a sender could put any
   * number of its tenants (IDs of {@code Aa}/{@code BB} blocks) on one loop.
   */
  private int shardOf(String tenant) {
    return shardOf(tenant, shards.length);
  }

  static int shardOf(String tenant, int shards) {
    return (SeededHash.fold(SeededHash.hash(tenant)) & 0x7FFF_FFFF) % shards;
  }

  /**
   * Answers every fragment still waiting with 503 and stops the sweepers; sends in flight end on
   * their own. Call before the event loops shut down.
   */
  @Override
  public void close() {
    messages.close();
    shards[0].stopExpiring();
    for (LaneShard s : shards) {
      if (s.loop.isShuttingDown()) {
        continue;
      }
      if (s.loop.inEventLoop()) {
        s.close();
      } else {
        s.loop.submit(s::close).awaitUninterruptibly(5, TimeUnit.SECONDS);
      }
    }
  }
}
