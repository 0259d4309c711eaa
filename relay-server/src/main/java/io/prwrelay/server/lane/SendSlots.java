package io.prwrelay.server.lane;

import java.util.ArrayDeque;

/**
 * The downstream connections of one event loop, as seen by the lanes living on it: how many of
 * their sends are on the wire, and, when every connection is taken, which lanes wait for one, in
 * the order they asked.
 *
 * <p>A lane that finds no free connection does not hand the sender a request to queue: it keeps its
 * fragments and waits here, and when a connection frees it sends everything it holds by then in one
 * request. Under load, that is what coalesces the fragments of many sender requests of the same
 * tenant into few downstream requests; when connections are free, nothing waits.
 *
 * <p><b>Slow lanes share half.</b> A lane whose last downstream request took longer than {@link
 * LaneContext#slowSendNanos} (a quarter of {@code relay.downstream.attempt-timeout}; a timeout
 * always does) is <em>slow</em> ({@link Lane#slow()}): the sends of slow lanes together hold at
 * most half of the connections ({@link #slowConnections}, at least one), and a slow lane that finds
 * that half taken waits in a queue of its own, which never holds back the other lanes. Without it,
 * one sender's hundreds of tenants whose downstream hangs took every connection of the loop, one
 * each, and the other tenants' batches waited behind them until their request's deadline. A lane is
 * slow or not by its last answer: the first send of a tenant nothing is known about is not slow, so
 * a wave of new slow tenants can hold every connection until their first attempts end. Touched only
 * on the loop.
 */
final class SendSlots {
  private final int connections;
  private final int slowConnections;
  private final ArrayDeque<Lane> waiting = new ArrayDeque<>();
  private final ArrayDeque<Lane> waitingSlow = new ArrayDeque<>();
  private int sending;
  private int sendingSlow;

  /**
   * @param connections sends this loop can have on the wire at once
   */
  SendSlots(int connections) {
    this.connections = Math.max(1, connections);
    this.slowConnections = Math.max(1, this.connections / 2);
  }

  /** True when a send of a lane that is not slow may start now. */
  boolean free() {
    return free(false);
  }

  /**
   * True when a send may start now: a connection is free and no lane waits for one; for a slow
   * lane's send, also fewer than {@link #slowConnections} slow sends are on the wire and no slow
   * lane waits.
   */
  boolean free(boolean slow) {
    if (sending >= connections || !waiting.isEmpty()) {
      return false;
    }
    return !slow || (sendingSlow < slowConnections && waitingSlow.isEmpty());
  }

  /**
   * True when a send may start now and leave at least {@code reserve} connections free, with no
   * lane waiting for one.
   */
  boolean freeBeyond(int reserve) {
    return connections - sending > reserve && waiting.isEmpty();
  }

  /** A send of a lane that is not slow starts. */
  void take() {
    take(false);
  }

  /** A send starts (it may exceed the connections when a lane could not wait). */
  void take(boolean slow) {
    sending++;
    if (slow) {
      sendingSlow++;
    }
  }

  /**
   * Queues {@code lane} until a connection frees (one a slow lane may take, when it is slow); a
   * lane waits at most once at a time.
   */
  void await(Lane lane) {
    if (!lane.waitingForSlot) {
      lane.waitingForSlot = true;
      (lane.slow() ? waitingSlow : waiting).add(lane);
    }
  }

  /** A send of a lane that was not slow when it started ended. */
  void release() {
    release(false);
  }

  /**
   * A send ended ({@code slow} as it was taken): lanes waiting for a connection may send now, in
   * order, those that are not slow first.
   */
  void release(boolean slow) {
    sending--;
    if (slow) {
      sendingSlow--;
    }
    while (sending < connections) {
      Lane next;
      if (!waiting.isEmpty()) {
        next = waiting.poll();
      } else if (!waitingSlow.isEmpty() && sendingSlow < slowConnections) {
        next = waitingSlow.poll();
      } else {
        break;
      }
      next.waitingForSlot = false;
      next.slotFree();
    }
  }

  /** Sends on the wire now. */
  int sending() {
    return sending;
  }

  /** Sends of slow lanes on the wire now. */
  int sendingSlow() {
    return sendingSlow;
  }

  /** Most sends of slow lanes on the wire at once: half the connections, at least one. */
  int slowConnections() {
    return slowConnections;
  }
}
