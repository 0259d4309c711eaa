package io.prwrelay.server.lane;

import java.util.ArrayDeque;
import java.util.List;

/**
 * Finds the bad batches of a merged downstream request that the downstream rejected as a whole, so
 * that only they fail.
 *
 * <p>A lane forwards what follows the tenant label of each series unread, and merges the same
 * tenant's batches of different sender requests into one downstream request. When one sender's
 * series is malformed beyond the tenant label, the downstream rejects (a non-retriable 4xx) the
 * whole merged request, innocent batches with it. So a rejected request of several batches is not
 * answered: its batches go again in two halves, each as a request of its own, and a half that is
 * rejected again is halved again, until a batch rejected alone is answered with the downstream's
 * message. Every half answered 2xx is delivered.
 *
 * <p>Bisection rather than each batch alone: for {@code k} bad batches among {@code n} it costs at
 * most {@code 2k·⌈log2 n⌉} requests (two halves of each rejected piece per level) where sending
 * each alone costs {@code n}. With one bad sender among many, the usual case, that is 8 requests
 * instead of 16 for 16 batches and 14 instead of 128 for 128; and the two halves of a level go out
 * at once, so the bad batch is answered after {@code ⌈log2 n⌉} round trips rather than {@code n /
 * max-concurrent-sends}. The price is the case where every batch is rejected (a downstream refusing
 * the tenant itself: 401, 403, 404): {@code 2n - 2} requests instead of {@code n}, each answered at
 * once.
 *
 * <p>In memory (sync mode, and direct sends in queue mode) the halves are marked with a {@link
 * Piece}: the lane sends a piece's batches together and never with other batches, each keeping its
 * own deadline, within the lane's bounds like any send. In the queue, where records can only be
 * read and acknowledged from the head, {@link Records} remembers how many of the head's records may
 * travel together.
 */
final class Bisection {
  private Bisection() {}

  /**
   * Marks the fragments of one piece of a rejected request: they go downstream together, never with
   * other fragments. Compared by identity.
   */
  static final class Piece {}

  /** Marks the two halves of {@code batch} (at least two fragments) as pieces of their own. */
  static void halve(List<Fragment> batch) {
    int half = batch.size() / 2;
    Piece first = new Piece();
    Piece second = new Piece();
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).inPiece(i < half ? first : second);
    }
  }

  /**
   * Queue mode: how many records at the head of a tenant's queue may be read and sent together
   * while the lane bisects a rejected merged read. Empty (no bound) otherwise. The counts only
   * group records: a record the queue drops meanwhile shifts the groups, which at worst merges a
   * bad record with a good one again, to be split again. Touched only on the lane's loop.
   */
  static final class Records {
    /** Record counts of the pieces still to send, in queue order. */
    private final ArrayDeque<Integer> pieces = new ArrayDeque<>();

    /** True while a rejected read's records are sent in pieces. */
    boolean active() {
      return !pieces.isEmpty();
    }

    /** At most {@code max} records, and no more than the first piece holds. */
    int limit(int max) {
      return pieces.isEmpty() ? max : Math.min(max, pieces.peekFirst());
    }

    /**
     * The {@code sent} records at the head (at least two) were rejected together: they become two
     * pieces, ahead of the rest of the piece they came from.
     */
    void rejected(int sent) {
      int rest = pieces.isEmpty() ? 0 : pieces.pollFirst() - sent;
      if (rest > 0) {
        pieces.addFirst(rest);
      }
      pieces.addFirst(sent - sent / 2);
      pieces.addFirst(sent / 2);
    }

    /** The queue is empty: what the pieces counted is gone. */
    void clear() {
      pieces.clear();
    }

    /** The {@code sent} records at the head were delivered or dropped: they leave their piece. */
    void consumed(int sent) {
      if (pieces.isEmpty()) {
        return;
      }
      int rest = pieces.pollFirst() - sent;
      if (rest > 0) {
        pieces.addFirst(rest);
      }
    }
  }
}
