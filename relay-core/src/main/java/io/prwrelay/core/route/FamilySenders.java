package io.prwrelay.core.route;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Whose each association of {@link MetricFamilies} is, for its fair eviction: every sender's
 * associations in an age list of their own (least recently seen first), and the senders in lists by
 * how many associations they hold, so that the least recently seen association of the sender
 * holding the most ({@link #victim}) is found in constant time.
 *
 * <p>Associations are {@link MetricFamilies}'s ids; the per-id arrays here grow with its arrays
 * ({@link #grow}): 12 bytes an association (the sender and two neighbours). A sender holding any
 * association takes about 80 bytes (its object and its map entry); it leaves when it holds none.
 * Not thread-safe: used under the lock of its {@link MetricFamilies}.
 */
final class FamilySenders {
  private static final int NONE = -1;

  /** Each association's sender, and its neighbours in that sender's age list. */
  private Sender[] owner = new Sender[0];

  private int[] newer = new int[0];
  private int[] older = new int[0];

  private final Map<Long, Sender> senders = new HashMap<>();

  /** {@code bySize[n]}: a list of the senders holding {@code n} associations. */
  private Sender[] bySize = new Sender[16];

  private int largest;

  /** A sender's associations: how many, its age list (oldest .. newest), its size list. */
  private static final class Sender {
    final long id;
    int held;
    int oldest = NONE;
    int newest = NONE;
    Sender prevSize;
    Sender nextSize;

    Sender(long id) {
      this.id = id;
    }
  }

  /** Makes room for association ids below {@code n}. */
  void grow(int n) {
    owner = Arrays.copyOf(owner, n);
    newer = Arrays.copyOf(newer, n);
    older = Arrays.copyOf(older, n);
  }

  /** Association {@code id}, new, is {@code sender}'s, its most recently seen. */
  void add(long sender, int id) {
    Sender s = senders.get(sender);
    if (s == null) {
      s = new Sender(sender);
      senders.put(sender, s);
    }
    owner[id] = s;
    linkNewest(s, id);
    resize(s, 1);
  }

  /** Association {@code id} was seen again: now its sender's most recently seen. */
  void touch(int id) {
    Sender s = owner[id];
    if (id != s.newest) {
      unlink(s, id);
      linkNewest(s, id);
    }
  }

  /** Association {@code id} is gone. */
  void remove(int id) {
    Sender s = owner[id];
    unlink(s, id);
    owner[id] = null;
    resize(s, -1);
  }

  /**
   * The association to evict to make room: the least recently seen of the sender holding the most
   * (of those holding as many, the one that reached that number last); {@code NONE} when none is
   * held.
   */
  int victim() {
    return largest == 0 ? NONE : bySize[largest].oldest;
  }

  /** Associations {@code sender} holds. */
  int held(long sender) {
    Sender s = senders.get(sender);
    return s == null ? 0 : s.held;
  }

  /** Senders holding associations. */
  int count() {
    return senders.size();
  }

  private void linkNewest(Sender s, int id) {
    older[id] = s.newest;
    newer[id] = NONE;
    if (s.newest != NONE) {
      newer[s.newest] = id;
    } else {
      s.oldest = id;
    }
    s.newest = id;
  }

  private void unlink(Sender s, int id) {
    int o = older[id];
    int n = newer[id];
    if (o != NONE) {
      newer[o] = n;
    } else {
      s.oldest = n;
    }
    if (n != NONE) {
      older[n] = o;
    } else {
      s.newest = o;
    }
  }

  /** Changes by {@code delta} how many associations {@code s} holds; it leaves at none. */
  private void resize(Sender s, int delta) {
    if (s.held > 0) {
      if (s.prevSize != null) {
        s.prevSize.nextSize = s.nextSize;
      } else {
        bySize[s.held] = s.nextSize;
      }
      if (s.nextSize != null) {
        s.nextSize.prevSize = s.prevSize;
      }
    }
    s.held += delta;
    if (s.held == 0) {
      senders.remove(s.id);
    } else {
      if (s.held == bySize.length) {
        bySize = Arrays.copyOf(bySize, bySize.length * 2);
      }
      Sender head = bySize[s.held];
      s.prevSize = null;
      s.nextSize = head;
      if (head != null) {
        head.prevSize = s;
      }
      bySize[s.held] = s;
      largest = Math.max(largest, s.held);
    }
    while (largest > 0 && bySize[largest] == null) {
      largest--;
    }
  }
}
