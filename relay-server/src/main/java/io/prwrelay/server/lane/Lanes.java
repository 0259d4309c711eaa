package io.prwrelay.server.lane;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.prwrelay.core.encode.BatchEncoder;
import io.prwrelay.core.remotewrite.SeededHash;
import io.prwrelay.server.config.DownstreamConfig.ProtocolMode;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.downstream.TenantSender;
import io.prwrelay.server.protocol.WrittenCounts;
import io.prwrelay.server.queue.TenantQueue;
import io.prwrelay.server.queue.TenantQueues;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The tenant lanes of the relay: one {@link Lane} per tenant, each living on one event loop chosen
 * by the tenant's hash, so a lane's state needs no lock. Fragments may be submitted from any
 * thread; they are handed to their lane's loop, and their listeners are called there.
 *
 * <p>In sync mode a lane may let other loops send its tenant's large fragments themselves while the
 * tenant is healthy (see {@link #submit}); the lane still decides every outcome other than a 2xx or
 * a non-retriable 4xx, and takes the permission back when it backs off or is forgotten.
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
  private final ScheduledFuture<?> expirer;

  /** Set by {@link #close()}: no loop sends a tenant's fragments for its lane any more. */
  private volatile boolean closed;

  /** How often queued records past their age bound are dropped (queue mode). */
  static final long EXPIRE_INTERVAL_SECONDS = 10;

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
    List<LaneShard> list = new ArrayList<>();
    for (EventExecutor e : loops) {
      EventLoop loop = (EventLoop) e;
      list.add(new LaneShard(list.size(), loop, sender.connections(loop), ctx, this, count));
    }
    if (list.isEmpty()) {
      throw new IllegalArgumentException("no event loop for the lanes");
    }
    this.shards = list.toArray(new LaneShard[0]);
    long sweepNanos = Math.max(TimeUnit.SECONDS.toNanos(1), settings.idleTimeout().toNanos() / 2);
    for (LaneShard s : shards) {
      s.sweepEvery(sweepNanos);
    }
    if (queues != null) {
      TenantQueues store = queues.store();
      for (TenantQueue q : store.queues()) {
        if (!q.isEmpty()) {
          LaneShard s = shards[shardOf(q.tenant())];
          s.loop.execute(
              () -> {
                Lane lane = s.lane(q.tenant());
                if (lane != null) {
                  lane.resume();
                }
              });
        }
      }
      LaneShard first = shards[0];
      expirer =
          first.loop.scheduleWithFixedDelay(
              () -> store.expire(queues.wallMillis().getAsLong()),
              EXPIRE_INTERVAL_SECONDS,
              EXPIRE_INTERVAL_SECONDS,
              TimeUnit.SECONDS);
    } else {
      expirer = null;
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
    fragments = compressed(fragments);
    if (fragments.isEmpty()) {
      return;
    }
    if (shards.length == 1) {
      hand(shards[0], fragments);
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
        f.origin = from.index;
      }
      if (byShard[i] == null) {
        byShard[i] = new ArrayList<>();
      }
      byShard[i].add(f);
    }
    for (int i = 0; i < shards.length; i++) {
      if (byShard[i] != null) {
        hand(shards[i], byShard[i]);
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
   * Hands fragments that a {@link Delegate} of loop {@code origin} took to their tenant's lane, to
   * be sent (or answered) there.
   */
  void toLane(List<Fragment> fragments, int origin) {
    for (int i = 0; i < fragments.size(); i++) {
      fragments.get(i).origin = origin;
    }
    hand(shards[shardOf(fragments.get(0).tenant())], fragments);
  }

  /**
   * Fragments that a {@link Delegate} sent and that came back 429, 5xx or without an answer, with
   * those that waited there, or that were rejected together (a non-retriable 4xx to several
   * fragments, which the lane sends again in halves): their tenant's lane decides, as if it had
   * sent them.
   *
   * @param origin the loop whose delegate this failure ended, or -1 when it ended none
   */
  void failedRemotely(
      List<Fragment> fragments, AttemptOutcome o, List<Fragment> waiting, int origin) {
    LaneShard home = shards[shardOf(fragments.get(0).tenant())];
    Runnable decide =
        () -> {
          Lane lane = closed ? null : home.lane(fragments.get(0).tenant());
          if (lane != null) {
            lane.remoteFailed(fragments, o, waiting, origin);
            return;
          }
          FragmentOutcome answer =
              closed
                  ? FragmentOutcome.shuttingDown()
                  : FragmentOutcome.noRoom(ctx.settings.maxLanes());
          fragments.forEach(f -> finish(f, answer));
          waiting.forEach(f -> finish(f, answer));
        };
    try {
      home.loop.execute(decide);
    } catch (RejectedExecutionException shuttingDown) {
      fragments.forEach(f -> finish(f, FragmentOutcome.shuttingDown()));
      waiting.forEach(f -> finish(f, FragmentOutcome.shuttingDown()));
    }
  }

  /**
   * A {@link Delegate} had a send of {@code tenant} rejected for good, or accepted after such a
   * rejection ({@code o}): its lane hears it ({@link Lane#remoteAnswered}). Nothing to hear when
   * the lane is gone or the relay shuts down.
   */
  void answeredRemotely(String tenant, AttemptOutcome o) {
    LaneShard home = shards[shardOf(tenant)];
    try {
      home.loop.execute(
          () -> {
            Lane lane = closed ? null : home.lane(tenant);
            if (lane != null) {
              lane.remoteAnswered(o);
            }
          });
    } catch (RejectedExecutionException shuttingDown) {
      // The lane is closing: its health no longer matters.
    }
  }

  /** A delegate of loop {@code shard} that ended itself; called on that loop. */
  void dropDelegate(int shard, String tenant, Delegate d) {
    shards[shard].dropDelegate(tenant, d);
  }

  /** Tells the observer a fragment's outcome, then the fragment's listener. */
  void finish(Fragment f, FragmentOutcome o) {
    ctx.observer.finished(f, o);
    f.complete(o);
  }

  /**
   * Answers every fragment of a send, from a lane or a {@link Delegate}, that came back 2xx
   * (delivered) or with a non-retriable 4xx (rejected).
   */
  void answer(List<Fragment> batch, AttemptOutcome o) {
    // The downstream's own written counts belong to a fragment only when it travelled alone.
    WrittenCounts written = batch.size() == 1 ? o.written() : null;
    for (int i = 0; i < batch.size(); i++) {
      Fragment f = batch.get(i);
      finish(f, FragmentOutcome.answered(o, f.attempts, written));
    }
  }

  /** Number of event loops the lanes live on. */
  int loops() {
    return shards.length;
  }

  /**
   * Called by a tenant's lane on its loop: the loop of index {@code shard} may send the tenant's
   * large fragments itself.
   */
  void announce(int shard, String tenant) {
    LaneShard s = shards[shard];
    try {
      s.loop.execute(
          () -> {
            if (!closed) {
              s.announced(tenant);
            }
          });
    } catch (RejectedExecutionException shuttingDown) {
      // Nothing is sent from a loop that is shutting down.
    }
  }

  /**
   * Called by a tenant's lane on its loop: the loop of index {@code shard} hands them over again.
   */
  void withdraw(int shard, String tenant) {
    LaneShard s = shards[shard];
    try {
      s.loop.execute(() -> s.withdrawn(tenant));
    } catch (RejectedExecutionException shuttingDown) {
      // Nothing is sent from a loop that is shutting down.
    }
  }

  /**
   * Fragments smaller than this many uncompressed bytes reach their lane uncompressed: the lane
   * compresses the small fragments it sends together as one block, which snappy makes faster per
   * byte and smaller than one tiny block per fragment (a request of many tenants with a few series
   * each). Larger fragments are compressed on the thread that built them, while their bytes are in
   * its cache.
   */
  static final int COMPRESS_IN_LANE_BELOW = BatchEncoder.SMALL_BATCH_BYTES;

  /**
   * The fragments, those of at least {@link #COMPRESS_IN_LANE_BELOW} bytes compressed; one that
   * cannot be is answered 500 and left out.
   */
  /**
   * Reads the key the downstream judges the fragment by ({@link
   * io.prwrelay.core.remotewrite.HaLabels}) from its uncompressed body, for a caller about to
   * replace that body by the sender's snappy block ({@link Fragment#forwardAs}): {@link #submit}
   * would otherwise read it from the start of the block, decompressing it again.
   */
  public void readHaKey(Fragment f) {
    HaKeys.judge(f, ctx.settings.haLabels(), ctx.alloc);
  }

  private List<Fragment> compressed(List<Fragment> fragments) {
    List<Fragment> out = null;
    for (int i = 0; i < fragments.size(); i++) {
      Fragment f = fragments.get(i);
      try {
        HaKeys.judge(f, ctx.settings.haLabels(), ctx.alloc); // from the body while it is at hand
        if (f.size() >= COMPRESS_IN_LANE_BELOW) {
          f.compress(ctx.alloc);
        }
      } catch (RuntimeException | Error e) {
        // Memory running out (a batch too large for what is left) must not leak the fragment:
        // it is answered here and releases its buffers.
        if (out == null) {
          out = new ArrayList<>(fragments.subList(0, i));
        }
        FragmentOutcome o = FragmentOutcome.cannotCompress(e, 0);
        ctx.observer.finished(f, o);
        f.complete(o);
        continue;
      }
      if (out != null) {
        out.add(f);
      }
    }
    return out == null ? fragments : out;
  }

  /** Hands fragments to their loop; a loop that no longer takes tasks answers them 503. */
  private void hand(LaneShard s, List<Fragment> fragments) {
    if (s.loop.inEventLoop()) {
      s.offerAll(fragments);
      return;
    }
    try {
      s.loop.execute(() -> s.offerAll(fragments));
    } catch (RejectedExecutionException shuttingDown) {
      for (Fragment f : fragments) {
        finish(f, FragmentOutcome.shuttingDown());
      }
    }
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
    closed = true;
    if (expirer != null) {
      expirer.cancel(false);
    }
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
