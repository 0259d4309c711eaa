package io.prwrelay.core.route;

import io.prwrelay.core.remotewrite.LabelSetHasher;
import io.prwrelay.core.remotewrite.SeededHash;
import java.util.Arrays;

/**
 * What a digesting router ({@code digestSeries}) recorded of each routed series: its label set's
 * 64-bit hash ({@link LabelSetHasher}) and its metric name, grouped by batch slot, so that a
 * consumer can count each tenant's distinct series and top metric names after routing, when the
 * request bytes may be gone. Metric names are copied once per distinct name and request, each cut
 * to at most {@link #MAX_NAME_BYTES} bytes and all of a request's to at most 256 KiB ({@link
 * DigestNames}).
 *
 * <p>Entries of one slot are chained in request order:
 *
 * <pre>
 *   for (int e = digests.first(slot); e != SeriesDigests.END; e = digests.next(e)) {
 *     long labelSet = digests.hash(e);
 *     int name = digests.name(e); // NO_NAME, or an index for nameHash / nameOffset / nameLength
 *   }
 * </pre>
 *
 * <p>Owned by a {@link RouteResult} and reused: valid until the next {@code route} call of its
 * router. Parallel arrays that grow with the request (16 bytes per series) and are given back after
 * one of more than {@value #RETAINED_ENTRIES} series; no allocation per series.
 */
public final class SeriesDigests {
  /** {@link #first} and {@link #next} past the last entry of a slot. */
  public static final int END = -1;

  /** {@link #name} of a series without a metric name. */
  public static final int NO_NAME = -1;

  /**
   * {@link #name} of a series whose name was not sampled ({@link #samplesName}), or whose name was
   * new when the request's names were full ({@link DigestNames#MAX_NAMES}, {@link
   * DigestNames#MAX_BYTES}).
   */
  public static final int NOT_SAMPLED = -2;

  /**
   * One series in {@code 2^NAME_SAMPLE_BITS} has its metric name recorded: those whose label set
   * hash has its low bits zero. The same series is always in or always out, so the sampled names
   * stand for a uniform sample of the distinct series. Measured on the real payload, finding and
   * interning every series' name cost about a quarter of the digest; names are only counted for
   * their shares, which a sample of one in eight estimates well past a few hundred series.
   */
  public static final int NAME_SAMPLE_BITS = 3;

  private static final long NAME_SAMPLE_MASK = (1L << NAME_SAMPLE_BITS) - 1;

  /** Whether the series whose label set hashes to {@code hash} has its name recorded. */
  public static boolean samplesName(long hash) {
    return (hash & NAME_SAMPLE_MASK) == 0;
  }

  /**
   * Longest metric name recorded whole, in bytes: a longer one is recorded as its first bytes and
   * {@code …}, this many bytes in all ({@link DigestNames}).
   */
  public static final int MAX_NAME_BYTES = DigestNames.MAX_NAME_BYTES;

  /**
   * Entries kept across requests: arrays grown past this many (a request of more series) are given
   * back at the next {@link #clear()}, so a router holds about 1 MiB of them between requests.
   */
  static final int RETAINED_ENTRIES = 1 << 16;

  private static final int INITIAL_ENTRIES = 256;

  private int count;
  private long[] hashes = new long[INITIAL_ENTRIES];
  private int[] names = new int[INITIAL_ENTRIES];
  private int[] next = new int[INITIAL_ENTRIES];

  private int slots;
  private int[] slotFirst = new int[16];
  private int[] slotLast = new int[16];

  private final DigestNames nameTable = new DigestNames();

  /** Forgets every entry, and gives back arrays grown past {@link #RETAINED_ENTRIES}. */
  void clear() {
    if (count == 0 && slots == 0 && nameTable.count() == 0) {
      return;
    }
    count = 0;
    slots = 0;
    nameTable.clear();
    if (hashes.length > RETAINED_ENTRIES) {
      hashes = new long[INITIAL_ENTRIES];
      names = new int[INITIAL_ENTRIES];
      next = new int[INITIAL_ENTRIES];
    }
  }

  /** Records a series of {@code slot} whose name is not sampled. */
  void add(int slot, long hash) {
    add(slot, hash, null, NOT_SAMPLED, 0);
  }

  /**
   * Records a series of {@code slot} (a slot at most one past the highest recorded so far).
   *
   * @param array borrowed; holds the metric name at {@code [nameOffset, nameOffset + nameLength)}
   * @param nameOffset -1 when the series has no metric name, {@link #NOT_SAMPLED} when it was not
   *     looked for
   */
  void add(int slot, long hash, byte[] array, int nameOffset, int nameLength) {
    if (count == hashes.length) {
      int n = count * 2;
      hashes = Arrays.copyOf(hashes, n);
      names = Arrays.copyOf(names, n);
      next = Arrays.copyOf(next, n);
    }
    while (slot >= slots) {
      if (slots == slotFirst.length) {
        slotFirst = Arrays.copyOf(slotFirst, slots * 2);
        slotLast = Arrays.copyOf(slotLast, slots * 2);
      }
      slotFirst[slots] = END;
      slotLast[slots] = END;
      slots++;
    }
    int e = count++;
    hashes[e] = hash;
    if (nameOffset >= 0) {
      int name = nameTable.intern(array, nameOffset, nameLength);
      names[e] = name == DigestNames.OVER ? NOT_SAMPLED : name;
    } else {
      names[e] = nameOffset == NOT_SAMPLED ? NOT_SAMPLED : NO_NAME;
    }
    next[e] = END;
    int last = slotLast[slot];
    if (last == END) {
      slotFirst[slot] = e;
    } else {
      next[last] = e;
    }
    slotLast[slot] = e;
  }

  /** Entries the arrays hold now without growing. */
  int capacity() {
    return hashes.length;
  }

  /** Series recorded, all slots. */
  public int count() {
    return count;
  }

  /** First entry of {@code slot}, or {@link #END} when it has none. */
  public int first(int slot) {
    return slot < slots ? slotFirst[slot] : END;
  }

  /** The entry after {@code entry} in its slot, or {@link #END}. */
  public int next(int entry) {
    return next[entry];
  }

  /** Label set hash of {@code entry}. */
  public long hash(int entry) {
    return hashes[entry];
  }

  /** Metric name index of {@code entry}, {@link #NO_NAME} or {@link #NOT_SAMPLED}. */
  public int name(int entry) {
    return names[entry];
  }

  /** Distinct metric names recorded (indexes {@code 0 .. nameCount() - 1}). */
  public int nameCount() {
    return nameTable.count();
  }

  /**
   * 64-bit hash of metric name {@code name} ({@link SeededHash} of its bytes, so that no sender can
   * compute a name that takes another's place in a table keyed by it): equal names have equal
   * hashes in every request of the process.
   */
  public long nameHash(int name) {
    return nameTable.hash(name);
  }

  /** The bytes of every metric name of the request; borrowed, valid like the digests. */
  public byte[] nameBytes() {
    return nameTable.bytes();
  }

  /** Index in {@link #nameBytes()} of metric name {@code name}. */
  public int nameOffset(int name) {
    return nameTable.offset(name);
  }

  /** Length in bytes of metric name {@code name}. */
  public int nameLength(int name) {
    return nameTable.length(name);
  }
}
