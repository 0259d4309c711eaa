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
 * has grown to the symbols tables of the requests (up to {@value #RETAINED_SYMBOLS} symbols; past
 * that, the next request starts from a small one). What the tenant insight counts distinct series
 * and top metric names with.
 *
 * <p><b>PRW 1.0:</b> the series' leading run of {@code labels} fields (tags and lengths included)
 * is hashed as one byte range, which ends at the first field that is not a label or not framed the
 * usual way (a one-byte tag, a length of at most two bytes inside the series): senders write all
 * labels first, sorted, the same bytes for the same series in every request. A reader that walks
 * labels ({@link WriteRequestReader#WriteRequestReader(java.util.List, boolean, boolean)}) finds
 * that end in the pass that finds the tenant, going on past the tenant label by tag and length
 * only; otherwise this walks the labels itself. Measured on the real payload, walking the labels a
 * second time cost about as much as the rest of the digest. A label encoded another way (fields out
 * of order) still hashes the same every time it is sent the same way.
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
 * <p>Keyed ({@link SeededHash}): the hash is what the per-tenant series limit and the insight tell
 * series apart by, and a sender must not be able to aim two label sets at one hash.
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

  // Odd constants of the PRW 2.0 combination of symbol hashes (keyed themselves).
  private static final long P1 = 0x9E3779B185EBCA87L;
  private static final long P2 = 0xC2B2AE3D27D4EB4FL;
  private static final long P3 = 0x165667B19E3779F9L;

  // The last series digested.
  private long hash;
  private int nameOffset;
  private int nameLength;
  private int labelsEnd;

  /**
   * Symbol refs whose hashes are kept across requests: arrays grown past this many (a PRW 2.0
   * request referring to more symbols) are given back when the next request starts, so a hasher
   * holds at most 768 KiB of them between requests.
   */
  static final int RETAINED_SYMBOLS = 1 << 16;

  // PRW 2.0: symbol hashes of the current request, valid where stamps[ref] == stamp.
  private SymbolTable symbols;
  private long[] symbolHashes = new long[256];
  private int[] stamps = new int[256];
  private int stamp;

  /** Symbol refs the PRW 2.0 scratch holds now without growing. */
  int symbolCapacity() {
    return stamps.length;
  }

  /** Hash of the last series digested. */
  public long hash() {
    return hash;
  }

  /**
   * Index in the request array of the metric name last found by {@code findName}, or -1 when it has
   * none (or an empty one, or one not in the usual encoding).
   */
  public int nameOffset() {
    return nameOffset;
  }

  /** Length in bytes of that metric name; 0 when there is none. */
  public int nameLength() {
    return nameLength;
  }

  /**
   * Digests a PRW 1.0 series: {@link #hash()}. Uses the end of the labels that a reader walking
   * labels found ({@link SeriesView#labelsEnd()}), else walks them itself.
   *
   * @param series borrowed; valid only during the reader's callback
   */
  public void digest(SeriesView series) {
    byte[] a = series.array();
    int start = series.contentStart();
    int end = series.labelsEnd();
    if (end == SeriesView.UNKNOWN) {
      end = walkLabels(a, start, series.end());
    }
    hash = hash(a, start, end - start);
    labelsEnd = end;
  }

  /**
   * Finds the metric name of the PRW 1.0 series last given to {@link #digest(SeriesView)}: {@link
   * #nameOffset()} and {@link #nameLength()}. Senders sort labels by name, so {@code __name__} is
   * nearly always the first label: one compare.
   *
   * @param series borrowed; the series just digested, still in the reader's callback
   */
  public void findName(SeriesView series) {
    long found = usualName(series.array(), series.contentStart(), labelsEnd);
    nameOffset = found < 0 ? -1 : (int) (found >>> 32);
    nameLength = found < 0 ? 0 : (int) found;
  }

  /**
   * Where the value of the {@code __name__} label lies among the leading {@code labels} fields of
   * {@code [pos, end)}, when it is encoded the usual way (label fields with a one- or two-byte
   * length, the name first with a one-byte length, a value length of one or two bytes): the offset
   * in the high and the length in the low 32 bits; -1 when the walk finds none that way (no name,
   * an empty one, or another encoding), which a caller needing every encoding then reads otherwise.
   * Senders sort labels by name, so {@code __name__} is nearly always the first label: one compare.
   *
   * @param a borrowed
   */
  public static long usualName(byte[] a, int pos, int end) {
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
      // | 0x0A | 8 | "__name__" | 0x12 | m | name |: 12 bytes before the name's m bytes (13 when m
      // takes two bytes: a name of 128 bytes or more).
      if (len > 12
          && a[body] == LabelFields.NAME_TAG
          && a[body + 1] == 8
          && (long) LONG.get(a, body + 2) == NAME_WORD
          && a[body + 10] == LabelFields.VALUE_TAG) {
        int m = a[body + 11];
        if (m == len - 12) {
          return ((long) (body + 12) << 32) | m;
        }
        if (m < 0 && a[body + 12] >= 0 && ((m & 0x7F) | (a[body + 12] << 7)) == len - 13) {
          return ((long) (body + 13) << 32) | (len - 13);
        }
      }
      pos = body + len;
    }
    return -1;
  }

  /**
   * The end of the leading run of {@code labels} fields from {@code pos}: the first field that is
   * not a label or not framed with a one-byte tag and a length of at most two bytes inside {@code
   * [pos, end)}.
   */
  private static int walkLabels(byte[] a, int pos, int end) {
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
      pos = body + len;
    }
    return pos;
  }

  /**
   * Starts a PRW 2.0 request: symbol hashes are computed anew, on first use.
   *
   * @param symbols borrowed; the request's symbols table (filled by the reader before it reports a
   *     series), valid until the reader's next read
   */
  public void startRequest(SymbolTable symbols) {
    this.symbols = symbols;
    if (stamps.length > RETAINED_SYMBOLS) {
      stamps = new int[256];
      symbolHashes = new long[256];
    }
    if (++stamp == Integer.MAX_VALUE) {
      Arrays.fill(stamps, 0);
      stamp = 1;
    }
  }

  /**
   * Digests a PRW 2.0 series of the request begun with {@link #startRequest}: {@link #hash()} of
   * its label refs, name and value alternating, each standing for its symbol's bytes.
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
  }

  /**
   * Finds the metric name of the PRW 2.0 series last given to {@link #digest(V2SeriesView)}.
   *
   * @param series borrowed; the series just digested, still in the reader's callback
   */
  public void findName(V2SeriesView series) {
    int[] refs = series.labelRefs();
    int n = series.labelRefCount();
    nameOffset = -1;
    nameLength = 0;
    SymbolTable s = symbols;
    byte[] a = s.array();
    for (int i = 0; i + 1 < n; i += 2) {
      int ref = refs[i];
      if (s.length(ref) == 8 && (long) LONG.get(a, s.offset(ref)) == NAME_WORD) {
        int value = refs[i + 1];
        if (s.length(value) > 0) {
          nameOffset = s.offset(value);
          nameLength = s.length(value);
        }
        return;
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
   * A 64-bit hash of {@code a[offset, offset + length)}: {@link SeededHash}, keyed by secrets drawn
   * once per process. The label set hash decides which series the per-tenant series limit counts as
   * already active, and the insight's counts: with an unkeyed hash a sender could compute, offline,
   * label sets that share an admitted series' hash and pass the limit as that series. (An unkeyed
   * {@code (lane ^ word) * odd} step is worse than unkeyed: two inputs that differ in the top bit
   * of two words of one lane collide whatever the starting state.)
   *
   * @param a borrowed
   */
  public static long hash(byte[] a, int offset, int length) {
    return SeededHash.hash(a, offset, length);
  }

  /**
   * Spreads every input bit over the low bits too (consumers index tables with them): one round of
   * a xor-shift-multiply finalizer, half of MurmurHash3's.
   */
  private static long mix(long h) {
    h = (h ^ (h >>> 32)) * 0xFF51AFD7ED558CCDL;
    return h ^ (h >>> 29);
  }
}
