package io.prwrelay.core.remotewrite;

import io.prwrelay.core.wire.LabelFields;
import io.prwrelay.core.wire.TimeSeriesFields;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A 64-bit hash of a series' whole label set and where its metric name ({@code __name__}) lies,
 * read in place from the request bytes: no {@code String}, no copy, no allocation once the scratch
 * has grown to the largest symbols table. What the tenant insight counts distinct series and top
 * metric names with.
 *
 * <p><b>PRW 1.0:</b> the series' leading run of {@code labels} fields (tags and lengths included)
 * is hashed as one byte range. The router's reader stops at the tenant label, so this walks the
 * rest of the labels by tag and length only (one or two bytes per label, never the label's bytes),
 * and stops at the first field that is not a label or not framed the usual way (a one-byte tag, a
 * length of at most two bytes inside the series): senders write all labels first, sorted, the same
 * bytes for the same series in every request. A label encoded another way (fields out of order)
 * still hashes the same every time it is sent the same way.
 *
 * <pre>
 *  contentStart                                          labelsEnd
 *  | 0x0A len | 0x0A 0x08 "__name__" 0x12 m name... | 0x0A len ... | 0x12 (samples) ...
 *  \______________ hashed as one range _____________________________/
 * </pre>
 *
 * <p><b>PRW 2.0:</b> label refs differ from request to request, so the label set is hashed from the
 * symbols' bytes: each symbol is hashed once per request (cached by ref), and a series' hash
 * combines its refs' symbol hashes in order. The same series sent as PRW 1.0 and as 2.0 hashes
 * differently (the encodings differ); a sender uses one.
 *
 * <p>The metric name is the value of the label named {@code __name__}, recognised in the usual
 * encoding (name field first, one-byte lengths) by one 8-byte compare. A reusable flyweight, not
 * thread-safe: one per router.
 */
public final class LabelSetHasher {
  private static final VarHandle LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /** {@code "__name__"} read as one little-endian long. */
  private static final long NAME_WORD =
      (long) LONG.get("__name__".getBytes(StandardCharsets.US_ASCII), 0);

  private static final long P1 = 0x9E3779B185EBCA87L;
  private static final long P2 = 0xC2B2AE3D27D4EB4FL;
  private static final long P3 = 0x165667B19E3779F9L;

  // The last series digested.
  private long hash;
  private int nameOffset;
  private int nameLength;

  // PRW 2.0: symbol hashes of the current request, valid where stamps[ref] == stamp.
  private SymbolTable symbols;
  private long[] symbolHashes = new long[256];
  private int[] stamps = new int[256];
  private int stamp;

  /** Hash of the last series digested. */
  public long hash() {
    return hash;
  }

  /**
   * Index in the request array of the last series' metric name, or -1 when it has none (or not in
   * the usual encoding).
   */
  public int nameOffset() {
    return nameOffset;
  }

  /** Length in bytes of the last series' metric name; 0 when it has none. */
  public int nameLength() {
    return nameLength;
  }

  /**
   * Digests a PRW 1.0 series: {@link #hash()}, {@link #nameOffset()} and {@link #nameLength()}.
   *
   * @param series borrowed; valid only during the reader's callback
   */
  public void digest(SeriesView series) {
    byte[] a = series.array();
    int start = series.contentStart();
    int end = series.end();
    int pos = start;
    int name = -1;
    int nameLen = 0;
    while (pos + 1 < end && a[pos] == TimeSeriesFields.LABELS_TAG) {
      int len = a[pos + 1];
      int body = pos + 2;
      if (len < 0) {
        if (pos + 2 >= end || a[pos + 2] < 0) {
          break;
        }
        len = (len & 0x7F) | (a[pos + 2] << 7);
        body = pos + 3;
      }
      if (len > end - body) {
        break;
      }
      // | 0x0A | 8 | "__name__" | 0x12 | m | name |: 12 bytes before the name's m bytes.
      if (name < 0
          && len >= 12
          && a[body] == LabelFields.NAME_TAG
          && a[body + 1] == 8
          && (long) LONG.get(a, body + 2) == NAME_WORD
          && a[body + 10] == LabelFields.VALUE_TAG
          && a[body + 11] == len - 12) {
        name = body + 12;
        nameLen = len - 12;
      }
      pos = body + len;
    }
    hash = hash(a, start, pos - start);
    nameOffset = name;
    nameLength = nameLen;
  }

  /**
   * Starts a PRW 2.0 request: symbol hashes are computed anew, on first use.
   *
   * @param symbols borrowed; the request's symbols table (filled by the reader before it reports a
   *     series), valid until the reader's next read
   */
  public void startRequest(SymbolTable symbols) {
    this.symbols = symbols;
    if (++stamp == Integer.MAX_VALUE) {
      Arrays.fill(stamps, 0);
      stamp = 1;
    }
  }

  /**
   * Digests a PRW 2.0 series of the request begun with {@link #startRequest}: its label refs, name
   * and value alternating, each standing for its symbol's bytes.
   *
   * @param series borrowed; valid only during the reader's callback
   */
  public void digest(V2SeriesView series) {
    int[] refs = series.labelRefs();
    int n = series.labelRefCount();
    long h = P3 ^ n;
    for (int i = 0; i < n; i++) {
      h = Long.rotateLeft(h ^ symbolHash(refs[i]), 27) * P1 + P2;
    }
    hash = mix(h);
    nameOffset = -1;
    nameLength = 0;
    SymbolTable s = symbols;
    byte[] a = s.array();
    for (int i = 0; i + 1 < n; i += 2) {
      int ref = refs[i];
      if (s.length(ref) == 8 && (long) LONG.get(a, s.offset(ref)) == NAME_WORD) {
        nameOffset = s.offset(refs[i + 1]);
        nameLength = s.length(refs[i + 1]);
        break;
      }
    }
  }

  private long symbolHash(int ref) {
    if (ref >= stamps.length) {
      int size = Math.max(ref + 1, stamps.length * 2);
      stamps = Arrays.copyOf(stamps, size);
      symbolHashes = Arrays.copyOf(symbolHashes, size);
    }
    if (stamps[ref] == stamp) {
      return symbolHashes[ref];
    }
    SymbolTable s = symbols;
    long h = hash(s.array(), s.offset(ref), s.length(ref));
    symbolHashes[ref] = h;
    stamps[ref] = stamp;
    return h;
  }

  /**
   * A 64-bit hash of {@code a[offset, offset + length)}: xxHash64's round on two lanes of 8-byte
   * words read in place, the tail folded in, and MurmurHash3's finalizer. For telling label sets
   * apart, not for adversaries: among a million distinct label sets, some two collide with
   * probability about 3 × 10^-8.
   *
   * @param a borrowed
   */
  public static long hash(byte[] a, int offset, int length) {
    long h1 = P1 + length;
    long h2 = P2 - length;
    int i = offset;
    int end = offset + length;
    for (; i + 16 <= end; i += 16) {
      h1 = Long.rotateLeft(h1 + (long) LONG.get(a, i) * P2, 31) * P1;
      h2 = Long.rotateLeft(h2 + (long) LONG.get(a, i + 8) * P2, 31) * P1;
    }
    if (i + 8 <= end) {
      h1 = Long.rotateLeft(h1 + (long) LONG.get(a, i) * P2, 31) * P1;
      i += 8;
    }
    long tail = 0;
    for (int shift = 0; i < end; i++, shift += 8) {
      tail |= (a[i] & 0xFFL) << shift;
    }
    h2 = Long.rotateLeft(h2 + tail * P2, 31) * P1;
    return mix(Long.rotateLeft(h1, 1) + Long.rotateLeft(h2, 7) * P3);
  }

  /** MurmurHash3's 64-bit finalizer. */
  private static long mix(long h) {
    h ^= h >>> 33;
    h *= 0xFF51AFD7ED558CCDL;
    h ^= h >>> 33;
    h *= 0xC4CEB9FE1A85EC53L;
    h ^= h >>> 33;
    return h;
  }
}
