package io.prwrelay.core.encode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.remotewrite.RequestError;
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
 * <p>While the request is read, {@link #addSeries} records each series' byte range and refs under
 * its tenant slot. {@link #encode} then handles one slot at a time: it collects the refs the slot's
 * series use (labels, minus a removed tenant label; exemplar labels; metadata help and unit),
 * writes the batch into a reused scratch array, and copies it into one pooled buffer of exactly its
 * size.
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
 * <p><b>Output bound.</b> What {@link #encode} writes may be far larger than the request: PRW 1.0
 * repeats a symbol in every series, exemplar and metadata entry that references it, and each PRW
 * 2.0 batch repeats the symbols its tenant uses. So the batches of one request may take at most
 * {@code maxBytes} together: each batch is sized before its buffer is allocated ({@link
 * V1FromV2Writer#size} counts without writing; a PRW 2.0 batch is written into the scratch array,
 * which one slot never fills beyond the request's own size), and the running sum is checked before
 * every allocation. A request over the bound gets {@link RequestError.Kind#TOO_LARGE} and no batch.
 *
 * <p>Scratch arrays grow to the largest request seen (or, for PRW 1.0, the largest batch within the
 * bound) and are reused; after warm-up no allocation happens per series or per label, and {@link
 * #encode} allocates one pooled buffer per tenant. A store per byte into an array, then one bulk
 * copy, costs less than the many small writes into a pooled (direct) buffer that re-encoding every
 * ref takes. Not thread-safe.
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
   * Writes every slot's batch, unless together they would take more than {@code maxBytes}.
   *
   * @param format the protocol of the batches
   * @param tenants tenant ID per slot
   * @param alloc where batch buffers come from; each batch gets exactly one buffer of its final
   *     size
   * @param maxBytes most bytes the batches of this request may take together ({@code
   *     relay.server.max-decompressed-bytes}, at most {@code Integer.MAX_VALUE - 8})
   * @param out receives one {@link TenantBatch} per slot, in slot order; the batches own their
   *     buffers. A buffer is allocated only once its bytes are ready and its batch is added right
   *     after, so a caller that clears {@code out} after an exception releases everything
   * @return {@code null}, or a {@link RequestError.Kind#TOO_LARGE} error when the batches would
   *     take more than {@code maxBytes}; then {@code out} is as it was (what was added is released)
   */
  public RequestError encode(
      Format format,
      String[] tenants,
      ByteBufAllocator alloc,
      int maxBytes,
      List<TenantBatch> out) {
    int first = out.size();
    V2SeriesRecords r = records;
    long total = 0;
    for (int slot = 0; slot < r.slots; slot++) {
      // Sized before anything is allocated for it: the running sum is the whole check.
      long size = format == Format.V1 ? v1.size(slot) : writeV2(slot);
      total += size;
      if (total > maxBytes) {
        releaseFrom(first, out);
        return tooLarge(format, slot, total, maxBytes);
      }
      TenantBatch b = batch(first + slot);
      b.tenant = tenants[slot];
      b.series = r.slotSeries[slot];
      b.samples = r.slotSamples[slot];
      b.exemplars = r.slotExemplars[slot];
      b.histograms = r.slotHistograms[slot];
      if (format == Format.V1) {
        b.metadata = v1.encode(slot, (int) size, alloc, b);
      } else {
        b.metadata = r.slotMetadata[slot];
        ByteBuf buf = alloc.buffer((int) size, (int) size);
        buf.writeBytes(scratch, 0, (int) size);
        b.content = buf;
      }
      out.add(b);
    }
    return null;
  }

  /**
   * Whether the request is its own PRW 2.0 batch: one slot holds all of the request's {@code
   * seriesRead} series, none with a label left out, and they use every symbol of the table (which a
   * batch would otherwise carry only the used part of).
   */
  public boolean keepsWholeRequest(int seriesRead) {
    if (records.slots != 1 || records.slotSeries[0] != seriesRead || records.cuts != 0) {
      return false;
    }
    markUsed(0);
    return usedCount == records.symbols.count();
  }

  /**
   * Writes the PRW 2.0 batch of a request that {@link #keepsWholeRequest} says is its own batch:
   * the request itself, without a copy.
   *
   * @param request borrowed; the request every offset of this encoder refers to, between its reader
   *     and writer index
   * @param out receives one {@link TenantBatch} whose content is a retained slice of {@code
   *     request}, owned by the batch
   */
  public void encodeWhole(String tenant, ByteBuf request, List<TenantBatch> out) {
    V2SeriesRecords r = records;
    TenantBatch b = batch(out.size());
    b.tenant = tenant;
    b.series = r.slotSeries[0];
    b.samples = r.slotSamples[0];
    b.exemplars = r.slotExemplars[0];
    b.histograms = r.slotHistograms[0];
    b.metadata = r.slotMetadata[0];
    b.content = request.retainedSlice(request.readerIndex(), request.readableBytes());
    out.add(b);
  }

  /** Releases and removes the batches this call added to {@code out}. */
  private static void releaseFrom(int first, List<TenantBatch> out) {
    for (int i = out.size() - 1; i >= first; i--) {
      out.remove(i).release();
    }
  }

  /**
   * The error for a request whose batches would pass {@code maxBytes}, with their size: exact for
   * PRW 1.0, whose remaining slots are sized (counting, without writing); for PRW 2.0 the size up
   * to the slot that passed the bound, since sizing one means writing it.
   */
  private RequestError tooLarge(Format format, int slot, long total, int maxBytes) {
    String bound = "more than relay.server.max-decompressed-bytes=" + maxBytes;
    if (format == Format.V1) {
      for (int s = slot + 1; s < records.slots; s++) {
        total += v1.size(s);
      }
      return RequestError.tooLarge(
          "converting this PRW 2.0 request to PRW 1.0 would take "
              + total
              + " bytes, "
              + bound
              + " (PRW 1.0 repeats a string in every series that references it)");
    }
    return RequestError.tooLarge(
        "splitting this PRW 2.0 request by tenant would take "
            + (slot == records.slots - 1 ? "" : "at least ")
            + total
            + " bytes, "
            + bound
            + " (each tenant's request carries its own copy of the symbols it references)");
  }

  private TenantBatch batch(int index) {
    while (pool.size() <= index) {
      pool.add(new TenantBatch());
    }
    return pool.get(index);
  }

  /**
   * Writes the slot's PRW 2.0 batch into {@link #scratch} and returns its size. The scratch array
   * needs at most the request's size (plus slack): a slot's symbols and series are each at most all
   * of the request's.
   */
  private int writeV2(int slot) {
    // Slack for the label refs' length prefix, reserved a few bytes longer than it may end up.
    int bound = collect(slot) + 16;
    if (scratch.length < bound) {
      scratch = new byte[Math.max(bound, scratch.length * 2)];
    }
    return write(slot, scratch);
  }

  /**
   * Finds the symbols the slot uses, sorts them and numbers them in that order.
   *
   * @return an upper bound of the batch size: the used symbols as fields plus the slot's series as
   *     received (a rewritten series is never longer: every new ref is at most its old ref)
   */
  private int collect(int slot) {
    int bound = markUsed(slot);
    Arrays.sort(used, 0, usedCount);
    identity = usedCount == records.symbols.count();
    int[] map = newRef;
    int[] u = used;
    SymbolTable symbols = records.symbols;
    for (int j = 0; j < usedCount; j++) {
      map[u[j]] = j;
      int length = symbols.length(u[j]);
      bound += 1 + Varints.size32(length) + length;
    }
    return bound;
  }

  /**
   * Marks the symbols the slot uses ({@link #used}, {@link #usedCount}, unsorted).
   *
   * @return the bytes of the slot's series as received
   */
  private int markUsed(int slot) {
    V2SeriesRecords r = records;
    SymbolTable symbols = r.symbols;
    int symbolCount = symbols.count();
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
    int bound = 0;
    int[] refs = r.refs;
    for (int i = r.head[slot]; i >= 0; i = r.next[i]) {
      bound += r.end[i] - r.start[i];
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
    return bound;
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
   * Writes the slot's batch into {@code d}; returns the number of bytes written. A rewritten
   * message is written after room for its header as large as the received one's, since its content
   * is no longer than the received content; in the rare case the length then takes fewer bytes, the
   * content moves down. This saves a sizing pass over every series.
   */
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
    int refBytes = 0;
    TrustedWalker e = inner.at(a, from);
    while (e.pos < to) {
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
      }
    }
    if (refBytes > 0) {
      d[p++] = (byte) V2ExemplarFields.LABELS_REFS_TAG;
      p = Varints.put32(d, p, refBytes);
      e = inner.at(a, from);
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
