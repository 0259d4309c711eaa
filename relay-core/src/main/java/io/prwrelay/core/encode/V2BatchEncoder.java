package io.prwrelay.core.encode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.remotewrite.SymbolTable;
import io.prwrelay.core.remotewrite.V2SeriesView;
import io.prwrelay.core.wire.V2ExemplarFields;
import io.prwrelay.core.wire.V2MetadataFields;
import io.prwrelay.core.wire.V2RequestFields;
import io.prwrelay.core.wire.V2TimeSeriesFields;
import io.prwrelay.core.wire.Varints;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Builds one request per tenant from the series of a PRW 2.0 request, either as PRW 2.0 with a
 * symbols table of the tenant's own ({@link Format#V2}) or converted to PRW 1.0 ({@link Format#V1},
 * see {@link V1FromV2Writer}).
 *
 * <p>While the request is read, {@link #addSeries} records each series' byte range and label refs
 * under its tenant slot. {@link #encode} then handles one slot at a time: it collects the refs the
 * slot's series use (labels, minus a removed tenant label; exemplar labels; metadata help and
 * unit), sizes the batch, allocates one buffer of exactly that size and writes it.
 *
 * <p><b>PRW 2.0 batches</b> carry only the symbols their own series reference, so no string of one
 * tenant reaches another tenant's request. The table keeps the request's order: ref 0 ({@code ""})
 * first, then every used symbol in ascending original ref. Each series is rewritten with its refs
 * remapped (labels in one packed {@code labels_refs} field first, then every other field in its
 * original order: exemplars with their refs remapped, metadata with {@code help_ref} and {@code
 * unit_ref} remapped, samples, histograms and unknown fields byte for byte). A tenant that uses
 * every symbol of the request keeps the request's table as is, and its series are copied byte for
 * byte unless a label is removed: the common single-tenant request costs a copy.
 *
 * <pre>
 * batch:  | 0x22 len "" | 0x22 len sym | ... | 0x2A len | 0x0A len new refs | other fields ... |
 * </pre>
 *
 * <p>Scratch arrays grow to the largest request seen and are reused; after warm-up no allocation
 * happens per series or per label, and {@link #encode} allocates one pooled buffer per tenant.
 * Batches are built in a scratch array and copied into their buffer in one call. Not thread-safe.
 */
public final class V2BatchEncoder {
  /** The protocol of the batches {@link #encode} writes. */
  public enum Format {
    /** PRW 2.0 {@code io.prometheus.write.v2.Request}, with a minimal symbols table per tenant. */
    V2,
    /** PRW 1.0 {@code prometheus.WriteRequest}, for downstreams that accept only 1.0. */
    V1
  }

  private final V2SeriesRecords records = new V2SeriesRecords();
  private final V1FromV2Writer v1 = new V1FromV2Writer(records);
  private final TrustedWalker walker = new TrustedWalker();
  private final TrustedWalker inner = new TrustedWalker();
  private final List<TenantBatch> pool = new ArrayList<>();

  // Per slot: the symbols it uses (sorted original refs) and their new refs.
  private int[] symbolStamp = new int[256];
  private int stamp;
  private int[] used = new int[256];
  private int usedCount;
  private int[] newRef = new int[256];
  private boolean identity;

  // Sizes computed before writing, consumed in the same order while writing.
  private int[] sizes = new int[256];
  private int sizeCount;
  private byte[] scratch = new byte[4096];

  /**
   * Starts a request.
   *
   * @param array borrowed; the request bytes every later offset refers to
   * @param symbols borrowed; the request's symbols table, valid until {@link #encode} returns
   */
  public void reset(byte[] array, SymbolTable symbols) {
    records.reset(array, symbols);
  }

  /**
   * Opens the next tenant slot and returns its number; slots are numbered from 0 in opening order.
   */
  public int openSlot() {
    return records.openSlot();
  }

  /** Number of slots opened for this request. */
  public int slots() {
    return records.slots;
  }

  /**
   * Adds a series to a slot.
   *
   * @param series borrowed view of the series; its refs are copied
   * @param removeTenantLabel leave out the label pair that resolved the series' tenant
   */
  public void addSeries(int slot, V2SeriesView series, boolean removeTenantLabel) {
    records.add(slot, series, removeTenantLabel);
  }

  /**
   * Writes every slot's batch.
   *
   * @param format the protocol of the batches
   * @param tenants tenant ID per slot
   * @param alloc where batch buffers come from; each batch gets exactly one buffer of its final
   *     size
   * @param out receives one {@link TenantBatch} per slot, in slot order; the batches own their
   *     buffers (a batch is added as soon as its buffer is allocated, so a caller that clears
   *     {@code out} after an exception releases everything)
   */
  public void encode(
      Format format, String[] tenants, ByteBufAllocator alloc, List<TenantBatch> out) {
    int first = out.size();
    V2SeriesRecords r = records;
    for (int slot = 0; slot < r.slots; slot++) {
      TenantBatch b = batch(first + slot);
      b.tenant = tenants[slot];
      b.series = r.slotSeries[slot];
      b.samples = r.slotSamples[slot];
      b.exemplars = r.slotExemplars[slot];
      b.histograms = r.slotHistograms[slot];
      if (format == Format.V1) {
        b.metadata = v1.encode(slot, alloc, b);
        out.add(b);
      } else {
        b.metadata = r.slotMetadata[slot];
        encodeV2(slot, alloc, b);
        out.add(b);
      }
    }
  }

  private TenantBatch batch(int index) {
    while (pool.size() <= index) {
      pool.add(new TenantBatch());
    }
    return pool.get(index);
  }

  private void encodeV2(int slot, ByteBufAllocator alloc, TenantBatch b) {
    collect(slot);
    int size = size(slot);
    ByteBuf buf = alloc.buffer(size, size);
    b.content = buf;
    if (scratch.length < size) {
      scratch = new byte[Math.max(size, scratch.length * 2)];
    }
    int written = write(slot, scratch);
    if (written != size) {
      throw new IllegalStateException("sized " + size + " bytes, wrote " + written);
    }
    buf.writeBytes(scratch, 0, size);
  }

  /** Finds the symbols the slot uses, sorts them and numbers them in that order. */
  private void collect(int slot) {
    V2SeriesRecords r = records;
    int symbolCount = r.symbols.count();
    if (symbolStamp.length < symbolCount) {
      int n = Math.max(symbolCount, symbolStamp.length * 2);
      symbolStamp = new int[n];
      used = new int[n];
      newRef = new int[n];
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
      int to = from + r.refCount[i];
      int cut = r.cut[i] < 0 ? -1 : from + 2 * r.cut[i];
      for (int k = from; k < to; k += 2) {
        if (k != cut) {
          mark(refs[k]);
          mark(refs[k + 1]);
        }
      }
      if (r.nested[i]) {
        collectNested(i);
      }
    }
    Arrays.sort(used, 0, usedCount);
    identity = usedCount == symbolCount;
    int[] map = newRef;
    int[] u = used;
    for (int j = 0; j < usedCount; j++) {
      map[u[j]] = j;
    }
  }

  private void mark(int ref) {
    if (symbolStamp[ref] != stamp) {
      symbolStamp[ref] = stamp;
      used[usedCount++] = ref;
    }
  }

  /** Marks the refs of a series' exemplars and metadata. */
  private void collectNested(int i) {
    V2SeriesRecords r = records;
    TrustedWalker w = walker.at(r.array, r.content[i]);
    int end = r.end[i];
    while (w.pos < end) {
      int tag = w.tag();
      w.skip(tag);
      if (tag == V2TimeSeriesFields.EXEMPLARS_TAG) {
        TrustedWalker e = inner.at(w.a, w.body);
        while (e.pos < w.pos) {
          int t = e.tag();
          if (t == V2ExemplarFields.LABELS_REFS_TAG) {
            int fieldEnd = (int) e.varint() + e.pos;
            while (e.pos < fieldEnd) {
              mark((int) e.varint());
            }
          } else if (t == V2ExemplarFields.LABELS_REF_UNPACKED_TAG) {
            mark((int) e.varint());
          } else {
            e.skip(t);
          }
        }
      } else if (tag == V2TimeSeriesFields.METADATA_TAG) {
        TrustedWalker m = inner.at(w.a, w.body);
        while (m.pos < w.pos) {
          int t = m.tag();
          if (t == V2MetadataFields.HELP_REF_TAG || t == V2MetadataFields.UNIT_REF_TAG) {
            mark((int) m.varint());
          } else {
            m.skip(t);
          }
        }
      }
    }
  }

  /** Whether series {@code i} is copied as received: same table, no label left out. */
  private boolean verbatim(int i) {
    return identity && records.cut[i] < 0;
  }

  /** Size of the slot's batch; records the nested sizes {@link #write} needs, in write order. */
  private int size(int slot) {
    V2SeriesRecords r = records;
    SymbolTable symbols = r.symbols;
    int total = 0;
    for (int j = 0; j < usedCount; j++) {
      int length = symbols.length(used[j]);
      total += 1 + Varints.size32(length) + length;
    }
    sizeCount = 0;
    int[] map = newRef;
    int[] refs = r.refs;
    for (int i = r.head[slot]; i >= 0; i = r.next[i]) {
      if (verbatim(i)) {
        total += r.end[i] - r.start[i];
        continue;
      }
      int at = reserve(2);
      int from = r.refStart[i];
      int to = from + r.refCount[i];
      int cut = r.cut[i] < 0 ? -1 : from + 2 * r.cut[i];
      int labels = 0;
      for (int k = from; k < to; k += 2) {
        if (k != cut) {
          labels += Varints.size32(map[refs[k]]) + Varints.size32(map[refs[k + 1]]);
        }
      }
      int content = labels == 0 ? 0 : 1 + Varints.size32(labels) + labels;
      TrustedWalker w = walker.at(r.array, r.content[i]);
      int end = r.end[i];
      while (w.pos < end) {
        int fieldStart = w.pos;
        int tag = w.tag();
        w.skip(tag);
        if (tag == V2TimeSeriesFields.LABELS_REFS_TAG
            || tag == V2TimeSeriesFields.LABELS_REF_UNPACKED_TAG) {
          continue;
        }
        if (tag == V2TimeSeriesFields.EXEMPLARS_TAG) {
          int c = sizeExemplar(w.body, w.pos);
          content += 1 + Varints.size32(c) + c;
        } else if (tag == V2TimeSeriesFields.METADATA_TAG) {
          int c = sizeMetadata(w.body, w.pos);
          int m = reserve(1);
          sizes[m] = c;
          content += 1 + Varints.size32(c) + c;
        } else {
          content += w.pos - fieldStart;
        }
      }
      sizes[at] = content;
      sizes[at + 1] = labels;
      total += 1 + Varints.size32(content) + content;
    }
    return total;
  }

  private int reserve(int n) {
    if (sizes.length - sizeCount < n) {
      sizes = Arrays.copyOf(sizes, Math.max(sizes.length * 2, sizeCount + n));
    }
    int at = sizeCount;
    sizeCount += n;
    return at;
  }

  private int sizeExemplar(int from, int to) {
    int at = reserve(2);
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
    int c = (refBytes == 0 ? 0 : 1 + Varints.size32(refBytes) + refBytes) + other;
    sizes[at] = c;
    sizes[at + 1] = refBytes;
    return c;
  }

  private int sizeMetadata(int from, int to) {
    int[] map = newRef;
    int c = 0;
    TrustedWalker m = inner.at(records.array, from);
    while (m.pos < to) {
      int fieldStart = m.pos;
      int t = m.tag();
      if (t == V2MetadataFields.HELP_REF_TAG || t == V2MetadataFields.UNIT_REF_TAG) {
        c += 1 + Varints.size32(map[(int) m.varint()]);
      } else {
        m.skip(t);
        c += m.pos - fieldStart;
      }
    }
    return c;
  }

  /** Writes the slot's batch into {@code d}; returns the number of bytes written. */
  private int write(int slot, byte[] d) {
    V2SeriesRecords r = records;
    SymbolTable symbols = r.symbols;
    byte[] a = r.array;
    int o = 0;
    for (int j = 0; j < usedCount; j++) {
      int ref = used[j];
      int length = symbols.length(ref);
      d[o++] = (byte) V2RequestFields.SYMBOLS_TAG;
      o = Varints.put32(d, o, length);
      System.arraycopy(a, symbols.offset(ref), d, o, length);
      o += length;
    }
    int q = 0;
    int[] map = newRef;
    int[] refs = r.refs;
    for (int i = r.head[slot]; i >= 0; i = r.next[i]) {
      if (verbatim(i)) {
        int length = r.end[i] - r.start[i];
        System.arraycopy(a, r.start[i], d, o, length);
        o += length;
        continue;
      }
      int content = sizes[q++];
      int labels = sizes[q++];
      d[o++] = (byte) V2RequestFields.TIMESERIES_TAG;
      o = Varints.put32(d, o, content);
      if (labels > 0) {
        d[o++] = (byte) V2TimeSeriesFields.LABELS_REFS_TAG;
        o = Varints.put32(d, o, labels);
        int from = r.refStart[i];
        int to = from + r.refCount[i];
        int cut = r.cut[i] < 0 ? -1 : from + 2 * r.cut[i];
        for (int k = from; k < to; k += 2) {
          if (k != cut) {
            o = Varints.put32(d, o, map[refs[k]]);
            o = Varints.put32(d, o, map[refs[k + 1]]);
          }
        }
      }
      TrustedWalker w = walker.at(a, r.content[i]);
      int end = r.end[i];
      while (w.pos < end) {
        int fieldStart = w.pos;
        int tag = w.tag();
        w.skip(tag);
        if (tag == V2TimeSeriesFields.LABELS_REFS_TAG
            || tag == V2TimeSeriesFields.LABELS_REF_UNPACKED_TAG) {
          continue;
        }
        if (tag == V2TimeSeriesFields.EXEMPLARS_TAG) {
          int c = sizes[q++];
          int refBytes = sizes[q++];
          d[o++] = (byte) V2TimeSeriesFields.EXEMPLARS_TAG;
          o = Varints.put32(d, o, c);
          o = writeExemplar(w.body, w.pos, refBytes, d, o);
        } else if (tag == V2TimeSeriesFields.METADATA_TAG) {
          int c = sizes[q++];
          d[o++] = (byte) V2TimeSeriesFields.METADATA_TAG;
          o = Varints.put32(d, o, c);
          o = writeMetadata(w.body, w.pos, d, o);
        } else {
          int length = w.pos - fieldStart;
          System.arraycopy(a, fieldStart, d, o, length);
          o += length;
        }
      }
    }
    return o;
  }

  /** Writes an exemplar's content: its refs in one packed field, then its other fields. */
  private int writeExemplar(int from, int to, int refBytes, byte[] d, int o) {
    int[] map = newRef;
    if (refBytes > 0) {
      d[o++] = (byte) V2ExemplarFields.LABELS_REFS_TAG;
      o = Varints.put32(d, o, refBytes);
      TrustedWalker e = inner.at(records.array, from);
      while (e.pos < to) {
        int t = e.tag();
        if (t == V2ExemplarFields.LABELS_REFS_TAG) {
          int fieldEnd = (int) e.varint() + e.pos;
          while (e.pos < fieldEnd) {
            o = Varints.put32(d, o, map[(int) e.varint()]);
          }
        } else if (t == V2ExemplarFields.LABELS_REF_UNPACKED_TAG) {
          o = Varints.put32(d, o, map[(int) e.varint()]);
        } else {
          e.skip(t);
        }
      }
    }
    byte[] a = records.array;
    TrustedWalker e = inner.at(a, from);
    while (e.pos < to) {
      int fieldStart = e.pos;
      int t = e.tag();
      e.skip(t);
      if (t != V2ExemplarFields.LABELS_REFS_TAG && t != V2ExemplarFields.LABELS_REF_UNPACKED_TAG) {
        int length = e.pos - fieldStart;
        System.arraycopy(a, fieldStart, d, o, length);
        o += length;
      }
    }
    return o;
  }

  /** Writes a metadata's content with {@code help_ref} and {@code unit_ref} remapped. */
  private int writeMetadata(int from, int to, byte[] d, int o) {
    int[] map = newRef;
    byte[] a = records.array;
    TrustedWalker m = inner.at(a, from);
    while (m.pos < to) {
      int fieldStart = m.pos;
      int t = m.tag();
      if (t == V2MetadataFields.HELP_REF_TAG || t == V2MetadataFields.UNIT_REF_TAG) {
        d[o++] = (byte) t;
        o = Varints.put32(d, o, map[(int) m.varint()]);
      } else {
        m.skip(t);
        int length = m.pos - fieldStart;
        System.arraycopy(a, fieldStart, d, o, length);
        o += length;
      }
    }
    return o;
  }
}
