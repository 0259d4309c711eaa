package io.prwrelay.server.lane;

import io.prwrelay.core.remotewrite.HaLabels;
import io.prwrelay.server.protocol.Protocol;
import java.util.ArrayList;
import java.util.List;

/**
 * Fragments waiting to be sent, in the order they go, with their uncompressed bytes and a floor
 * under their requests' deadlines: a {@link Lane}'s, and a {@link Delegate}'s. Owns the fragments
 * until they are taken out. Touched only on the owner's loop; times are its ticker's.
 */
final class Pending {
  /**
   * The fragments, a ring of {@code count} from {@code head}: an {@code ArrayDeque} would do, but
   * its iterator per {@link #timeLeft} and its two array copies per {@link #takeAll} showed in the
   * allocation profile, and it has no indexed access.
   */
  private Fragment[] ring = new Fragment[8];

  private int head;
  private int count;
  private long bytes;

  /**
   * No fragment here has a deadline before this ticker time, so {@link #expire} need not look at
   * them before then. Lowered as fragments are added, recomputed by {@link #expire}'s scan.
   */
  private long deadlineFloor;

  boolean isEmpty() {
    return count == 0;
  }

  int size() {
    return count;
  }

  /** Uncompressed bytes waiting. */
  long bytes() {
    return bytes;
  }

  /** The fragment that goes next, or {@code null}. */
  Fragment peek() {
    return count == 0 ? null : ring[head];
  }

  /** Adds {@code f} behind the others. */
  void add(Fragment f) {
    lowerDeadlineFloor(f);
    push(f);
    bytes += f.size();
  }

  /** Puts {@code f} back at the head, to go first (a retry, a piece of a rejected request). */
  void addFirst(Fragment f) {
    lowerDeadlineFloor(f);
    if (count == ring.length) {
      grow();
    }
    head = (head - 1) & (ring.length - 1);
    ring[head] = f;
    count++;
    bytes += f.size();
  }

  /** Takes the fragment that goes next, or {@code null}. */
  Fragment poll() {
    if (count == 0) {
      return null;
    }
    Fragment f = take();
    bytes -= f.size();
    return f;
  }

  /** Takes every fragment, in order. */
  List<Fragment> takeAll() {
    return takeAll(new ArrayList<>(count));
  }

  /** Moves every fragment, in order, to the end of {@code out}, and returns it. */
  <L extends List<Fragment>> L takeAll(L out) {
    while (count > 0) {
      out.add(poll());
    }
    bytes = 0;
    return out;
  }

  /** Puts {@code f} at the tail of the ring. */
  private void push(Fragment f) {
    if (count == ring.length) {
      grow();
    }
    ring[(head + count) & (ring.length - 1)] = f;
    count++;
  }

  /** Takes the head of the ring, which is not empty. */
  private Fragment take() {
    Fragment f = ring[head];
    ring[head] = null;
    head = (head + 1) & (ring.length - 1);
    count--;
    return f;
  }

  /** The {@code i}th fragment from the head. */
  private Fragment get(int i) {
    return ring[(head + i) & (ring.length - 1)];
  }

  /** Puts {@code f} {@code i}th from the head. */
  private void set(int i, Fragment f) {
    ring[(head + i) & (ring.length - 1)] = f;
  }

  /** Doubles the ring (its length stays a power of two), the head moved to index 0. */
  private void grow() {
    Fragment[] bigger = new Fragment[ring.length * 2];
    for (int i = 0; i < count; i++) {
      bigger[i] = get(i);
    }
    ring = bigger;
    head = 0;
  }

  /**
   * Moves to {@code batch}, behind its only fragment (a PRW 1.0 one), the fragments waiting that
   * may travel with it in one request of at most {@code maxBytes}: PRW 1.0 fragments (a PRW 2.0
   * fragment's series refer to its own symbols table) of the same piece of a rejected request
   * ({@link Bisection}: a piece travels with no others) that the downstream judges as the first
   * ({@link HaLabels#judgedAlike}: with HA deduplication on, it accepts or drops a whole request by
   * its first series).
   *
   * <p>The run at the head goes first, as far as it may. A fragment judged otherwise stays, and
   * those behind it judged as the first still join (each sender's fragments keep their order: a
   * replica's fragments are judged alike). A fragment of the first's key that cannot join (too
   * large, PRW 2.0, of a piece) holds back every fragment behind it.
   */
  void joinTo(List<Fragment> batch, int maxBytes) {
    Fragment first = batch.get(0);
    long joined = first.size();
    while (count > 0 && joins(peek(), first, joined, maxBytes)) {
      Fragment f = poll();
      batch.add(f);
      joined += f.size();
    }
    if (count == 0 || first.piece() != null || alike(peek(), first)) {
      return; // nothing waits, a piece goes alone, or the first of its key that cannot join leads
    }
    // Fragments of other keys lead: those of the first's key behind them join, the rest close up.
    int kept = 0;
    int i = 0;
    for (; i < count; i++) {
      Fragment f = get(i);
      if (f.piece() != null || f.protocol() != Protocol.V1) {
        break;
      }
      if (alike(f, first)) {
        if (!joins(f, first, joined, maxBytes)) {
          break;
        }
        batch.add(f);
        joined += f.size();
        bytes -= f.size();
        continue;
      }
      set(kept++, f);
    }
    if (kept == i) {
      return; // none joined
    }
    for (; i < count; i++) {
      set(kept++, get(i));
    }
    for (int k = kept; k < count; k++) {
      set(k, null);
    }
    count = kept;
  }

  private static boolean alike(Fragment f, Fragment first) {
    return HaLabels.judgedAlike(f.haKey(), first.haKey());
  }

  private static boolean joins(Fragment f, Fragment first, long joined, int maxBytes) {
    return f.protocol() == Protocol.V1
        && f.piece() == first.piece()
        && alike(f, first)
        && joined + f.size() <= maxBytes;
  }

  /**
   * Moves to {@code out} the fragment at the head and every fragment behind it that the downstream
   * judges alike ({@link HaLabels#judgedAlike}), in order; the others stay, in order. For a {@link
   * Delegate}, whose fragments are all PRW 1.0 and none a piece.
   */
  <L extends List<Fragment>> L takeJudgedAlike(L out) {
    Fragment first = poll();
    out.add(first);
    int kept = 0;
    for (int i = 0; i < count; i++) {
      Fragment f = get(i);
      if (alike(f, first)) {
        out.add(f);
        bytes -= f.size();
      } else {
        set(kept++, f);
      }
    }
    for (int k = kept; k < count; k++) {
      set(k, null);
    }
    count = kept;
    return out;
  }

  /**
   * Takes the fragments whose request deadline has passed, in order; an empty list, allocating
   * nothing, while the deadline floor says none can have.
   */
  List<Fragment> expire(long now) {
    if (count == 0 || deadlineFloor - now > 0) {
      return List.of();
    }
    List<Fragment> late = null;
    int n = count;
    boolean first = true;
    for (int i = 0; i < n; i++) {
      Fragment f = take();
      if (f.deadlineNanos() - now > 0) {
        if (first || f.deadlineNanos() - deadlineFloor < 0) {
          deadlineFloor = f.deadlineNanos();
          first = false;
        }
        push(f);
        continue;
      }
      bytes -= f.size();
      if (late == null) {
        late = new ArrayList<>();
      }
      late.add(f);
    }
    return late == null ? List.of() : late;
  }

  /**
   * The time left from {@code now} until the earliest deadline of the fragments waiting; {@code
   * Long.MAX_VALUE} when none waits.
   */
  long timeLeft(long now) {
    long left = Long.MAX_VALUE;
    for (int i = 0; i < count; i++) {
      left = Math.min(left, get(i).deadlineNanos() - now);
    }
    return left;
  }

  /** The time left until the earliest deadline of {@code batch}, from {@code now}. */
  static long timeLeft(List<Fragment> batch, long now) {
    long left = Long.MAX_VALUE;
    for (int i = 0; i < batch.size(); i++) {
      left = Math.min(left, batch.get(i).deadlineNanos() - now);
    }
    return left;
  }

  private void lowerDeadlineFloor(Fragment f) {
    if (count == 0 || f.deadlineNanos() - deadlineFloor < 0) {
      deadlineFloor = f.deadlineNanos();
    }
  }
}
