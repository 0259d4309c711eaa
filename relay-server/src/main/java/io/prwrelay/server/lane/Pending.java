package io.prwrelay.server.lane;

import io.prwrelay.server.downstream.Protocol;
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
   * Moves to {@code batch}, behind its only fragment (a PRW 1.0 one), the fragments at the head
   * that may travel with it in one request of at most {@code maxBytes}: PRW 1.0 fragments (a PRW
   * 2.0 fragment's series refer to its own symbols table) of the same piece of a rejected request
   * ({@link Bisection}: a piece travels with no others).
   */
  void joinTo(List<Fragment> batch, int maxBytes) {
    Fragment head = batch.get(0);
    long joined = head.size();
    while (count > 0
        && peek().protocol() == Protocol.V1
        && peek().piece == head.piece
        && joined + peek().size() <= maxBytes) {
      Fragment f = poll();
      batch.add(f);
      joined += f.size();
    }
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
