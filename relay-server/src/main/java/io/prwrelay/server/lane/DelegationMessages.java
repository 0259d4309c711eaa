package io.prwrelay.server.lane;

import io.prwrelay.server.downstream.AttemptOutcome;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * Sync mode: the messages between event loops of the delegation protocol drawn in the package
 * documentation, each a task run on the loop it is for. From a lane ({@link Delegations}) to a
 * routing loop: {@link #announce}, {@link #withdraw}. From a {@link Delegate} to its tenant's lane:
 * {@link #toLane}, {@link #failedRemotely}, {@link #answeredRemotely}. A message to a loop that no
 * longer takes tasks, or sent after {@link #close}, is dropped, and the fragments it carries are
 * answered 503. Thread-safe; every message may be sent from any loop of the lanes.
 */
final class DelegationMessages {
  /** The shards of the lanes, by loop index; filled by {@link Lanes} after this is made. */
  private final LaneShard[] shards;

  private final LaneContext ctx;

  /** Set by {@link #close()}: no loop sends a tenant's fragments for its lane any more. */
  private volatile boolean closed;

  /**
   * @param shards the lanes' shards by loop index, filled before the first message
   */
  DelegationMessages(LaneShard[] shards, LaneContext ctx) {
    this.shards = shards;
    this.ctx = ctx;
  }

  /** Number of event loops the lanes live on. */
  int loops() {
    return shards.length;
  }

  /**
   * Called by a tenant's lane on its loop: the loop of index {@code shard} may send the tenant's
   * large fragments itself (announce).
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
   * Called by a tenant's lane on its loop: the loop of index {@code shard} hands them over again
   * (withdraw).
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
   * Hands fragments that a {@link Delegate} of loop {@code origin} took to their tenant's lane, to
   * be sent (or answered) there.
   */
  void toLane(List<Fragment> fragments, int origin) {
    for (int i = 0; i < fragments.size(); i++) {
      fragments.get(i).handedFrom(origin);
    }
    home(fragments.get(0).tenant()).hand(fragments);
  }

  /**
   * Fragments that a {@link Delegate} sent and that came back 429, 5xx or without an answer, with
   * those that waited there, or that were rejected together (a non-retriable 4xx to several
   * fragments, which the lane sends again in halves): their tenant's lane decides, as if it had
   * sent them (fail).
   *
   * @param origin the loop whose delegate this failure ended, or -1 when it ended none
   */
  void failedRemotely(
      List<Fragment> fragments, AttemptOutcome o, List<Fragment> waiting, int origin) {
    LaneShard home = home(fragments.get(0).tenant());
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
          fragments.forEach(f -> ctx.finish(f, answer));
          waiting.forEach(f -> ctx.finish(f, answer));
        };
    try {
      home.loop.execute(decide);
    } catch (RejectedExecutionException shuttingDown) {
      fragments.forEach(f -> ctx.finish(f, FragmentOutcome.shuttingDown()));
      waiting.forEach(f -> ctx.finish(f, FragmentOutcome.shuttingDown()));
    }
  }

  /**
   * A {@link Delegate} had a send of {@code tenant} rejected for good, or accepted after such a
   * rejection ({@code o}): its lane hears it ({@link Lane#remoteAnswered}). Nothing to hear when
   * the lane is gone or the relay shuts down.
   */
  void answeredRemotely(String tenant, AttemptOutcome o) {
    LaneShard home = home(tenant);
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

  /** From now on no message starts a delegate or reaches a lane (shutdown). */
  void close() {
    closed = true;
  }

  /** The shard of {@code tenant}'s lane. */
  private LaneShard home(String tenant) {
    return shards[Lanes.shardOf(tenant, shards.length)];
  }
}
