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
 * tenant into few downstream requests; when connections are free, nothing waits. Touched only on
 * the loop.
 */
final class SendSlots {
  private final int connections;
  private final ArrayDeque<Lane> waiting = new ArrayDeque<>();
  private int sending;

  /**
   * @param connections sends this loop can have on the wire at once
   */
  SendSlots(int connections) {
    this.connections = Math.max(1, connections);
  }

  /** True when a send may start now: a connection is free and no lane waits for one. */
  boolean free() {
    return sending < connections && waiting.isEmpty();
  }

  /**
   * True when a send may start now and leave at least {@code reserve} connections free, with no
   * lane waiting for one.
   */
  boolean freeBeyond(int reserve) {
    return connections - sending > reserve && waiting.isEmpty();
  }

  /** A send starts (it may exceed the connections when a lane could not wait). */
  void take() {
    sending++;
  }

  /** Queues {@code lane} until a connection frees; a lane waits at most once at a time. */
  void await(Lane lane) {
    if (!lane.waitingForSlot) {
      lane.waitingForSlot = true;
      waiting.add(lane);
    }
  }

  /** A send ended: lanes waiting for a connection may send now, in order. */
  void release() {
    sending--;
    while (sending < connections && !waiting.isEmpty()) {
      Lane next = waiting.poll();
      next.waitingForSlot = false;
      next.slotFree();
    }
  }

  /** Sends on the wire now. */
  int sending() {
    return sending;
  }
}
