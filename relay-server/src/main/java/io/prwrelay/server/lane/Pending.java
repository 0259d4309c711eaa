package io.prwrelay.server.lane;

import io.prwrelay.server.downstream.Protocol;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Fragments waiting to be sent, in the order they go, with their uncompressed bytes and a floor
 * under their requests' deadlines: a {@link Lane}'s, and a {@link Delegate}'s. Owns the fragments
 * until they are taken out. Touched only on the owner's loop; times are its ticker's.
 */
final class Pending {
  private final ArrayDeque<Fragment> fragments = new ArrayDeque<>();
  private long bytes;

  /**
   * No fragment here has a deadline before this ticker time, so {@link #expire} need not look at
   * them before then. Lowered as fragments are added, recomputed by {@link #expire}'s scan.
   */
  private long deadlineFloor;

  boolean isEmpty() {
    return fragments.isEmpty();
  }

  int size() {
    return fragments.size();
  }

  /** Uncompressed bytes waiting. */
  long bytes() {
    return bytes;
  }

  /** The fragment that goes next, or {@code null}. */
  Fragment peek() {
    return fragments.peek();
  }

  /** Adds {@code f} behind the others. */
  void add(Fragment f) {
    lowerDeadlineFloor(f);
    fragments.add(f);
    bytes += f.size();
  }

  /** Puts {@code f} back at the head, to go first (a retry, a piece of a rejected request). */
  void addFirst(Fragment f) {
    lowerDeadlineFloor(f);
    fragments.addFirst(f);
    bytes += f.size();
  }

  /** Takes the fragment that goes next, or {@code null}. */
  Fragment poll() {
    Fragment f = fragments.poll();
    if (f != null) {
      bytes -= f.size();
    }
    return f;
  }

  /** Takes every fragment, in order. */
  List<Fragment> takeAll() {
    List<Fragment> all = new ArrayList<>(fragments);
    fragments.clear();
    bytes = 0;
    return all;
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
    while (!fragments.isEmpty()
        && fragments.peek().protocol() == Protocol.V1
        && fragments.peek().piece == head.piece
        && joined + fragments.peek().size() <= maxBytes) {
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
    if (fragments.isEmpty() || deadlineFloor - now > 0) {
      return List.of();
    }
    List<Fragment> late = null;
    int n = fragments.size();
    boolean first = true;
    for (int i = 0; i < n; i++) {
      Fragment f = fragments.poll();
      if (f.deadlineNanos() - now > 0) {
        if (first || f.deadlineNanos() - deadlineFloor < 0) {
          deadlineFloor = f.deadlineNanos();
          first = false;
        }
        fragments.add(f);
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
    for (Fragment f : fragments) {
      left = Math.min(left, f.deadlineNanos() - now);
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
    if (fragments.isEmpty() || f.deadlineNanos() - deadlineFloor < 0) {
      deadlineFloor = f.deadlineNanos();
    }
  }
}
