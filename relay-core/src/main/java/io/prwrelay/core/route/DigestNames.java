package io.prwrelay.core.route;

import io.prwrelay.core.remotewrite.Bytes;
import io.prwrelay.core.remotewrite.SeededHash;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The distinct metric names of one request's {@link SeriesDigests}, copied out of the request so
 * that they outlive it, each once, with a bound on every name and on all of them.
 *
 * <p><b>Bounds.</b> A name is kept whole up to {@value #MAX_NAME_BYTES} bytes; a longer one is kept
 * as its first bytes (cut at a UTF-8 character boundary) followed by {@code …} (U+2026, three
 * bytes), {@value #MAX_NAME_BYTES} bytes at most in all, and longer names that share those first
 * bytes are one name. Real Prometheus metric names are a few dozen bytes. A request records at most
 * {@value #MAX_NAMES} names and {@value #MAX_BYTES} bytes of them; a sampled series whose name
 * would pass either is recorded as not sampled ({@link #OVER}). So the arrays here never pass about
 * 450 KiB (256 KiB of names, 96 KiB of per-name arrays, 96 KiB of table) however large or hostile
 * the request, and a series costs at most {@value #MAX_NAME_BYTES} bytes compared, hashed and
 * copied, never its name's whole length: a PRW 2.0 request that points thousands of series at one
 * symbol of a megabyte costs a few hundred bytes per series, not a megabyte.
 *
 * <p><b>Lookup.</b> Series of one metric come in runs or cycles of a few names, so a direct-mapped
 * cache of {@value #CACHE} names, keyed by the name's length and end bytes and confirmed by
 * comparing the bytes, finds nearly every repeated name without hashing it. A name the cache misses
 * is copied to the end of the names, hashed there, and looked up by that hash in an open-addressing
 * table: found, the copy is forgotten; not, it becomes the next name.
 *
 * <p>Not thread-safe: owned by one router's {@link SeriesDigests}.
 */
final class DigestNames {
  /** Longest name kept whole, in bytes; longer names are cut to this many, marker included. */
  static final int MAX_NAME_BYTES = 256;

  /** Most distinct names recorded for one request. */
  static final int MAX_NAMES = 4096;

  /** Most bytes of names recorded for one request. */
  static final int MAX_BYTES = 256 << 10;

  /** {@link #intern} when the request's names are full. */
  static final int OVER = -1;

  /** What ends a cut name: {@code …} in UTF-8. */
  private static final byte[] MARKER = "\u2026".getBytes(StandardCharsets.UTF_8);

  private static final int CACHE = 64;

  private int count;
  private long[] hashes = new long[32];
  private int[] offsets = new int[32];
  private int[] lengths = new int[32];
  // Bytes of the request's name kept in the name (its length when whole, less when cut).
  private int[] kept = new int[32];
  // Index in the table of each name, to forget them one by one.
  private int[] cells = new int[32];
  private byte[] bytes = new byte[1024];
  private int used;

  // Open addressing by name hash: name index + 1, 0 when empty; at most half full.
  private long[] tableKeys = new long[64];
  private int[] tableNames = new int[64];

  // Direct-mapped by the name's length and end bytes: name index + 1, 0 when empty.
  private final int[] cache = new int[CACHE];

  /** Forgets every name. */
  void clear() {
    for (int n = 0; n < count; n++) {
      tableNames[cells[n]] = 0;
    }
    count = 0;
    used = 0;
    Arrays.fill(cache, 0);
  }

  /** Names recorded. */
  int count() {
    return count;
  }

  long hash(int name) {
    return hashes[name];
  }

  /** Where the names are; borrowed, valid until the next {@link #clear()}. */
  byte[] bytes() {
    return bytes;
  }

  int offset(int name) {
    return offsets[name];
  }

  int length(int name) {
    return lengths[name];
  }

  /**
   * The index of the name {@code array[offset, offset + length)} (non-empty), recorded on its first
   * series in the request; {@link #OVER} when it is new and the request's names are full.
   *
   * @param array borrowed; read, never kept
   */
  int intern(byte[] array, int offset, int length) {
    int keep = length <= MAX_NAME_BYTES ? length : cut(array, offset);
    int c = (length * 31 + array[offset] * 7 + array[offset + keep - 1]) & (CACHE - 1);
    int cached = cache[c] - 1;
    if (cached >= 0 && matches(cached, array, offset, length, keep)) {
      return cached;
    }
    int stored = keep == length ? length : keep + MARKER.length;
    if (used + stored > bytes.length) {
      // used <= MAX_BYTES, stored <= MAX_NAME_BYTES: never more than that.
      bytes = Arrays.copyOf(bytes, Math.max(used + stored, Math.min(bytes.length * 2, MAX_BYTES)));
    }
    System.arraycopy(array, offset, bytes, used, keep);
    if (keep != length) {
      System.arraycopy(MARKER, 0, bytes, used + keep, MARKER.length);
    }
    long h = SeededHash.hash(bytes, used, stored);
    int mask = tableKeys.length - 1;
    int cell = (int) (h ^ (h >>> 32)) & mask;
    for (int n; (n = tableNames[cell] - 1) >= 0; cell = (cell + 1) & mask) {
      if (tableKeys[cell] == h) {
        cache[c] = n + 1;
        return n;
      }
    }
    if (count == MAX_NAMES || used + stored > MAX_BYTES) {
      return OVER;
    }
    int n = add(h, used, stored, keep, cell);
    used += stored;
    cache[c] = n + 1;
    return n;
  }

  /**
   * How many bytes of a name longer than {@link #MAX_NAME_BYTES} are kept: room for the marker,
   * then back to the start of the character the cut would split.
   */
  private static int cut(byte[] array, int offset) {
    int keep = MAX_NAME_BYTES - MARKER.length;
    while (keep > 1 && (array[offset + keep] & 0xC0) == 0x80) {
      keep--;
    }
    return keep;
  }

  /** Whether name {@code n} is the one at {@code array[offset, offset + length)}. */
  private boolean matches(int n, byte[] array, int offset, int length, int keep) {
    boolean cutToo = keep != length;
    return kept[n] == keep
        && (lengths[n] != kept[n]) == cutToo
        && Bytes.equalsAt(array, offset, keep, bytes, offsets[n], keep);
  }

  private int add(long h, int at, int stored, int keep, int cell) {
    if (count == hashes.length) {
      int size = count * 2;
      hashes = Arrays.copyOf(hashes, size);
      offsets = Arrays.copyOf(offsets, size);
      lengths = Arrays.copyOf(lengths, size);
      kept = Arrays.copyOf(kept, size);
      cells = Arrays.copyOf(cells, size);
    }
    int n = count++;
    hashes[n] = h;
    offsets[n] = at;
    lengths[n] = stored;
    kept[n] = keep;
    tableKeys[cell] = h;
    tableNames[cell] = n + 1;
    cells[n] = cell;
    if (count * 2 > tableKeys.length) {
      rehash(tableKeys.length * 2);
    }
    return n;
  }

  private void rehash(int size) {
    tableKeys = new long[size];
    tableNames = new int[size];
    int mask = size - 1;
    for (int n = 0; n < count; n++) {
      long h = hashes[n];
      int cell = (int) (h ^ (h >>> 32)) & mask;
      while (tableNames[cell] != 0) {
        cell = (cell + 1) & mask;
      }
      tableKeys[cell] = h;
      tableNames[cell] = n + 1;
      cells[n] = cell;
    }
  }
}
