package io.prwrelay.server.lane;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

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
 * <p><b>Unproven lanes share half.</b> A lane is <em>proven</em> while its last downstream request
 * was answered within {@link LaneContext#slowSendNanos} (a quarter of {@code
 * relay.downstream.attempt-timeout}); a lane not answered yet, or whose last request took longer or
 * timed out, is unproven ({@link Lane#unproven()}). The sends of unproven lanes together hold at
 * most half of the connections ({@link #unprovenConnections}, at least one), and an unproven lane
 * that finds that half taken waits in a turn of its own, behind the proven lanes waiting: a proven
 * lane always finds the other half. Unproven lanes take turns by sender (the sender of the fragment
 * at the head of the lane, {@link Lane#waitingSender()}): one lane of each sender in turn, so that
 * another sender's new tenants are not queued behind one sender's hundreds. Without it, one
 * sender's hundreds of tenants whose downstream hangs took every connection of the loop, one each
 * and wave after wave of new ones, and the other tenants' batches waited behind them until their
 * request's deadline. Touched only on the loop.
 */
final class SendSlots {
  private final int connections;
  private final int unprovenConnections;
  private final ArrayDeque<Lane> waiting = new ArrayDeque<>();

  /** Unproven lanes waiting, by sender, the senders in turn (null: a lane without one). */
  private final LinkedHashMap<Object, ArrayDeque<Lane>> waitingUnproven = new LinkedHashMap<>();

  private int sending;
  private int sendingUnproven;

  /**
   * @param connections sends this loop can have on the wire at once
   */
  SendSlots(int connections) {
    this.connections = Math.max(1, connections);
    this.unprovenConnections = Math.max(1, this.connections / 2);
  }

  /**
   * True when a send may start now: a connection is free and no proven lane waits for one; for an
   * unproven lane's send, also fewer than {@link #unprovenConnections} unproven sends are on the
   * wire and no unproven lane waits.
   */
  boolean free(boolean unproven) {
    if (sending >= connections || !waiting.isEmpty()) {
      return false;
    }
    return !unproven || (sendingUnproven < unprovenConnections && waitingUnproven.isEmpty());
  }

  /**
   * True when a send may start now and leave at least {@code reserve} connections free, with no
   * lane waiting for one.
   */
  boolean freeBeyond(int reserve) {
    return connections - sending > reserve && waiting.isEmpty();
  }

  /** A send starts (it may exceed the connections when a lane could not wait). */
  void take(boolean unproven) {
    sending++;
    if (unproven) {
      sendingUnproven++;
    }
  }

  /**
   * Queues {@code lane} until a connection frees (one an unproven lane may take, when it is
   * unproven); a lane waits at most once at a time.
   */
  void await(Lane lane) {
    if (!lane.waitingForSlot) {
      lane.waitingForSlot = true;
      if (lane.unproven()) {
        waitingUnproven.computeIfAbsent(lane.waitingSender(), k -> new ArrayDeque<>()).add(lane);
      } else {
        waiting.add(lane);
      }
    }
  }

  /**
   * A send ended ({@code unproven} as it was taken): lanes waiting for a connection may send now,
   * in order, the proven ones first.
   */
  void release(boolean unproven) {
    sending--;
    if (unproven) {
      sendingUnproven--;
    }
    while (sending < connections) {
      Lane next;
      if (!waiting.isEmpty()) {
        next = waiting.poll();
      } else if (!waitingUnproven.isEmpty() && sendingUnproven < unprovenConnections) {
        next = nextUnproven();
      } else {
        break;
      }
      next.waitingForSlot = false;
      next.slotFree();
    }
  }

  /** The first waiting lane of the sender whose turn it is; that sender's turn moves to the end. */
  private Lane nextUnproven() {
    Iterator<Map.Entry<Object, ArrayDeque<Lane>>> senders = waitingUnproven.entrySet().iterator();
    Map.Entry<Object, ArrayDeque<Lane>> first = senders.next();
    Lane lane = first.getValue().poll();
    senders.remove();
    if (!first.getValue().isEmpty()) {
      waitingUnproven.put(first.getKey(), first.getValue());
    }
    return lane;
  }

  /** Sends on the wire now. */
  int sending() {
    return sending;
  }
}
