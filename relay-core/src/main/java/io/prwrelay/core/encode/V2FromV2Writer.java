package io.prwrelay.core.encode;

import io.prwrelay.core.remotewrite.SymbolTable;
import io.prwrelay.core.wire.ScratchMemory;
import io.prwrelay.core.wire.V2ExemplarFields;
import io.prwrelay.core.wire.V2MetadataFields;
import io.prwrelay.core.wire.V2RequestFields;
import io.prwrelay.core.wire.V2TimeSeriesFields;
import io.prwrelay.core.wire.Varints;
import java.util.Arrays;

/**
 * Writes one slot of {@link V2SeriesRecords} as a PRW 2.0 request of its own: the per-tenant
 * requests for a downstream that takes 2.0. Sized first ({@link #size}, exact, without writing),
 * then written in place ({@link #write}) into a buffer of that size plus {@link #SLACK}.
 *
 * <p>A batch carries only the symbols its own series reference, so no string of one tenant reaches
 * another tenant's request. The table keeps the request's order: ref 0 ({@code ""}) first, then
 * every used symbol in ascending original ref. Each series is rewritten with its refs remapped
 * (labels in one packed {@code labels_refs} field first, then every other field in its original
 * order: exemplars with their refs remapped, metadata with {@code help_ref} and {@code unit_ref}
 * remapped, samples, histograms and unknown fields byte for byte). A tenant that uses every symbol
 * of the request keeps the request's table as is, and its series are copied byte for byte unless a
 * label is removed: the common single-tenant request costs a copy.
 *
 * <pre>
 * batch:  | 0x22 len "" | 0x22 len sym | ... | 0x2A len | 0x0A len new refs | other fields ... |
 * </pre>
 *
 * The per-symbol arrays grow in the encoder's {@link ScratchMemory}. Not thread-safe.
 */
final class V2FromV2Writer {
  /**
   * Bytes a batch's buffer has beyond its size: {@link #write} writes a rewritten message after
   * room for a header as long as the received one's and moves it down once its length is known, so
   * the last series may reach a few bytes past the batch's end before it moves.
   */
  static final int SLACK = 16;

  private static final int SYMBOLS = 256;

  private final V2SeriesRecords records;
  private final ScratchMemory scratch;
  private final TrustedWalker walker = new TrustedWalker();
  private final TrustedWalker inner = new TrustedWalker();

  // Per slot: the symbols it uses (sorted original refs) and their new refs.
  private int[] symbolStamp = new int[SYMBOLS];
  private int stamp;
  private int[] used = new int[SYMBOLS];
  private int usedCount;
  private int[] newRef = new int[SYMBOLS];
  private boolean identity;

  /**
   * @param scratch where the per-symbol arrays grow
   */
  V2FromV2Writer(V2SeriesRecords records, ScratchMemory scratch) {
    this.records = records;
    this.scratch = scratch;
    scratch.register(
        () -> {
          symbolStamp = new int[SYMBOLS];
          used = new int[SYMBOLS];
          newRef = new int[SYMBOLS];
        });
  }

  /**
   * The exact size of slot {@code slot} as a PRW 2.0 request, computed without writing or
   * allocating; {@link #write} of the same slot must follow before another slot is sized.
   */
  long size(int slot) {
    collect(slot);
    return sizeCollected(slot);
  }

  /**
   * Writes the slot {@link #size} sized last into {@code d} from {@code start}.
   *
   * @param size what {@link #size} returned for the slot, once the caller has checked it against
   *     its bound; {@code d} has room for it and {@link #SLACK} bytes more from {@code start}
   */
  void write(int slot, int size, byte[] d, int start) {
    int written = write(slot, d, start) - start;
    if (written != size) {
      throw new IllegalStateException("sized " + size + " bytes, wrote " + written);
    }
  }

  /** Whether the slot's series use every symbol of the request's table. */
  boolean usesEverySymbol(int slot) {
    markUsed(slot);
    return usedCount == records.symbols.count();
  }

  /**
   * Finds the symbols the slot uses, sorts them and numbers them in that order, for {@link
   * #sizeCollected} and {@link #write}.
   */
  private void collect(int slot) {
    markUsed(slot);
    Arrays.sort(used, 0, usedCount);
    identity = usedCount == records.symbols.count();
    int[] map = newRef;
    int[] u = used;
    for (int j = 0; j < usedCount; j++) {
      map[u[j]] = j;
    }
  }

  /**
   * The exact size of the slot's PRW 2.0 batch, after {@link #collect}: what {@link #write} writes,
   * counted without writing (the used symbols as fields; each series as received, or rewritten with
   * its refs renumbered). A {@code long}: every tenant's table repeats the symbols it uses.
   */
  private long sizeCollected(int slot) {
    V2SeriesRecords r = records;
    SymbolTable symbols = r.symbols;
    long size = 0;
    for (int j = 0; j < usedCount; j++) {
      int length = symbols.length(used[j]);
      size += 1 + Varints.size32(length) + length;
    }
    int[] map = newRef;
    int[] refs = r.refs;
    for (int i = r.head[slot]; i >= 0; i = r.next[i]) {
      int end = r.end[i];
      if (verbatim(i)) {
        size += end - r.start[i];
        continue;
      }
      int from = r.refStart[i];
      int to = from + r.refCount[i];
      int cut = r.cut[i] < 0 ? -1 : from + 2 * r.cut[i];
      int content = 0;
      if (to - from > (cut < 0 ? 0 : 2)) {
        int refBytes = 0;
        for (int k = from; k < to; k += 2) {
          if (k != cut) {
            refBytes += Varints.size32(map[refs[k]]) + Varints.size32(map[refs[k + 1]]);
          }
        }
        content += 1 + Varints.size32(refBytes) + refBytes;
      }
      TrustedWalker w = walker.at(r.array, r.content[i]);
      while (w.pos < end) {
        int fieldStart = w.pos;
        int tag = w.tag();
        w.skip(tag);
        if (tag == V2TimeSeriesFields.LABELS_REFS_TAG
            || tag == V2TimeSeriesFields.LABELS_REF_UNPACKED_TAG) {
          continue;
        }
        int field;
        if (tag == V2TimeSeriesFields.EXEMPLARS_TAG) {
          field = exemplarSize(w.body, w.pos);
        } else if (tag == V2TimeSeriesFields.METADATA_TAG) {
          field = metadataSize(w.body, w.pos);
        } else {
          content += w.pos - fieldStart;
          continue;
        }
        content += 1 + Varints.size32(field) + field;
      }
      size += 1 + Varints.size32(content) + content;
    }
    return size;
  }

  /** The content size of an exemplar {@link #writeExemplar} writes. */
  private int exemplarSize(int from, int to) {
    long scan = scanExemplar(from, to);
    int refBytes = (int) scan;
    int other = (int) (scan >>> 32);
    return (refBytes > 0 ? 1 + Varints.size32(refBytes) + refBytes : 0) + other;
  }

  /**
   * One pass over an exemplar's fields: the bytes of its label references once renumbered (low 32
   * bits) and the bytes of its other fields (high 32 bits).
   */
  private long scanExemplar(int from, int to) {
    int[] map = newRef;
    int refBytes = 0;
    int other = 0;
    TrustedWalker e = inner.at(records.array, from);
    while (e.pos < to) {
      int fieldStart = e.pos;
      int t = e.tag();
      if (t == V2ExemplarFields.LABELS_REFS_TAG) {
        int fieldEnd = (int) e.varint() + e.pos;
        while (e.pos < fieldEnd) {
          refBytes += Varints.size32(map[(int) e.varint()]);
        }
      } else if (t == V2ExemplarFields.LABELS_REF_UNPACKED_TAG) {
        refBytes += Varints.size32(map[(int) e.varint()]);
      } else {
        e.skip(t);
        other += e.pos - fieldStart;
      }
    }
    return ((long) other << 32) | (refBytes & 0xFFFFFFFFL);
  }

  /** The content size of a metadata field {@link #writeMetadata} writes. */
  private int metadataSize(int from, int to) {
    int[] map = newRef;
    int size = 0;
    TrustedWalker m = inner.at(records.array, from);
    while (m.pos < to) {
      int fieldStart = m.pos;
      int t = m.tag();
      if (t == V2MetadataFields.HELP_REF_TAG || t == V2MetadataFields.UNIT_REF_TAG) {
        size += 1 + Varints.size32(map[(int) m.varint()]);
      } else {
        m.skip(t);
        size += m.pos - fieldStart;
      }
    }
    return size;
  }

  /** Marks the symbols the slot uses ({@link #used}, {@link #usedCount}, unsorted). */
  private void markUsed(int slot) {
    V2SeriesRecords r = records;
    SymbolTable symbols = r.symbols;
    int symbolCount = symbols.count();
    if (symbolStamp.length < symbolCount) {
      int n = Math.max(symbolCount, symbolStamp.length * 2);
      scratch.charge(3L * Integer.BYTES * (n - symbolStamp.length));
      symbolStamp = new int[n];
      used = new int[n];
      newRef = new int[n];
      stamp = 0;
    }
    if (++stamp == Integer.MAX_VALUE) {
      Arrays.fill(symbolStamp, 0);
      stamp = 1;
    }
    usedCount = 0;
    if (symbolCount > 0) {
      mark(0);
    }
    int[] refs = r.refs;
    for (int i = r.head[slot]; i >= 0; i = r.next[i]) {
      int from = r.refStart[i];
      int labelsEnd = from + r.refCount[i];
      int cut = r.cut[i] < 0 ? -1 : from + 2 * r.cut[i];
      for (int k = from; k < labelsEnd; k += 2) {
        if (k != cut) {
          mark(refs[k]);
          mark(refs[k + 1]);
        }
      }
      for (int k = labelsEnd, to = labelsEnd + r.nestedCount[i]; k < to; k++) {
        mark(refs[k]);
      }
    }
  }

  private void mark(int ref) {
    if (symbolStamp[ref] != stamp) {
      symbolStamp[ref] = stamp;
      used[usedCount++] = ref;
    }
  }

  /** Whether series {@code i} is copied as received: same table, no label left out. */
  private boolean verbatim(int i) {
    return identity && records.cut[i] < 0;
  }

  /**
   * Writes the slot's batch into {@code d} from {@code start}, after {@link #collect}; returns the
   * index one past it, {@link #sizeCollected} past {@code start}, having written at most {@link
   * #SLACK} bytes beyond it. A rewritten message is written after room for its header as large as
   * the received one's, since its content is no longer than the received content; in the rare case
   * the length then takes fewer bytes, the content moves down. This saves a sizing pass over every
   * series.
   */
  private int write(int slot, byte[] d, int start) {
    V2SeriesRecords r = records;
    SymbolTable symbols = r.symbols;
    byte[] a = r.array;
    int o = start;
    for (int j = 0; j < usedCount; j++) {
      int ref = used[j];
      int length = symbols.length(ref);
      d[o++] = (byte) V2RequestFields.SYMBOLS_TAG;
      o = Varints.put32(d, o, length);
      System.arraycopy(a, symbols.offset(ref), d, o, length);
      o += length;
    }
    int[] map = newRef;
    int[] refs = r.refs;
    for (int i = r.head[slot]; i >= 0; i = r.next[i]) {
      int content = r.content[i];
      int end = r.end[i];
      if (verbatim(i)) {
        int length = end - r.start[i];
        System.arraycopy(a, r.start[i], d, o, length);
        o += length;
        continue;
      }
      int headerAt = o;
      int reserved = 1 + Varints.size32(end - content);
      int p = o + reserved;
      int from = r.refStart[i];
      int to = from + r.refCount[i];
      int cut = r.cut[i] < 0 ? -1 : from + 2 * r.cut[i];
      if (to - from > (cut < 0 ? 0 : 2)) {
        // The packed length takes at most size32(5 bytes per ref) bytes; shrink it after.
        int lengthAt = p + 1;
        int reservedLength = Varints.size32(5 * (to - from));
        int refsAt = lengthAt + reservedLength;
        int q = refsAt;
        for (int k = from; k < to; k += 2) {
          if (k != cut) {
            q = Varints.put32(d, q, map[refs[k]]);
            q = Varints.put32(d, q, map[refs[k + 1]]);
          }
        }
        p = header(d, p, 1 + reservedLength, q, V2TimeSeriesFields.LABELS_REFS_TAG);
      }
      TrustedWalker w = walker.at(a, content);
      while (w.pos < end) {
        int fieldStart = w.pos;
        int tag = w.tag();
        w.skip(tag);
        if (tag == V2TimeSeriesFields.LABELS_REFS_TAG
            || tag == V2TimeSeriesFields.LABELS_REF_UNPACKED_TAG) {
          continue;
        }
        if (tag == V2TimeSeriesFields.EXEMPLARS_TAG) {
          p = writeExemplar(w.body, w.pos, d, p);
        } else if (tag == V2TimeSeriesFields.METADATA_TAG) {
          p = writeMetadata(w.body, w.pos, d, p);
        } else {
          int length = w.pos - fieldStart;
          System.arraycopy(a, fieldStart, d, p, length);
          p += length;
        }
      }
      o = header(d, headerAt, reserved, p, V2RequestFields.TIMESERIES_TAG);
    }
    return o;
  }

  /**
   * Completes a message written at {@code headerAt + reserved} up to {@code end}: writes its tag
   * and length before it, moving the content down when the header is shorter than reserved.
   *
   * @return the index one past the message
   */
  private static int header(byte[] d, int headerAt, int reserved, int end, int tag) {
    int contentAt = headerAt + reserved;
    int length = end - contentAt;
    int header = 1 + Varints.size32(length);
    if (header != reserved) {
      System.arraycopy(d, contentAt, d, headerAt + header, length);
    }
    d[headerAt] = (byte) tag;
    Varints.put32(d, headerAt + 1, length);
    return headerAt + header + length;
  }

  /** Writes an exemplar field: its refs in one packed field, then its other fields. */
  private int writeExemplar(int from, int to, byte[] d, int o) {
    int[] map = newRef;
    byte[] a = records.array;
    int reserved = 1 + Varints.size32(to - from);
    int p = o + reserved;
    int refBytes = (int) scanExemplar(from, to);
    if (refBytes > 0) {
      d[p++] = (byte) V2ExemplarFields.LABELS_REFS_TAG;
      p = Varints.put32(d, p, refBytes);
      TrustedWalker e = inner.at(a, from);
      while (e.pos < to) {
        int t = e.tag();
        if (t == V2ExemplarFields.LABELS_REFS_TAG) {
          int fieldEnd = (int) e.varint() + e.pos;
          while (e.pos < fieldEnd) {
            p = Varints.put32(d, p, map[(int) e.varint()]);
          }
        } else if (t == V2ExemplarFields.LABELS_REF_UNPACKED_TAG) {
          p = Varints.put32(d, p, map[(int) e.varint()]);
        } else {
          e.skip(t);
        }
      }
    }
    p =
        inner
            .at(a, from)
            .copyFieldsExcept(
                to,
                V2ExemplarFields.LABELS_REFS_TAG,
                V2ExemplarFields.LABELS_REF_UNPACKED_TAG,
                d,
                p);
    return header(d, o, reserved, p, V2TimeSeriesFields.EXEMPLARS_TAG);
  }

  /** Writes a metadata field with {@code help_ref} and {@code unit_ref} remapped. */
  private int writeMetadata(int from, int to, byte[] d, int o) {
    int[] map = newRef;
    byte[] a = records.array;
    int reserved = 1 + Varints.size32(to - from);
    int p = o + reserved;
    TrustedWalker m = inner.at(a, from);
    while (m.pos < to) {
      int fieldStart = m.pos;
      int t = m.tag();
      if (t == V2MetadataFields.HELP_REF_TAG || t == V2MetadataFields.UNIT_REF_TAG) {
        d[p++] = (byte) t;
        p = Varints.put32(d, p, map[(int) m.varint()]);
      } else {
        m.skip(t);
        int length = m.pos - fieldStart;
        System.arraycopy(a, fieldStart, d, p, length);
        p += length;
      }
    }
    return header(d, o, reserved, p, V2TimeSeriesFields.METADATA_TAG);
  }
}
