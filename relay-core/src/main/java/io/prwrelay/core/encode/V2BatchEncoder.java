package io.prwrelay.core.encode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.codec.MemoryGrant;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.remotewrite.SymbolTable;
import io.prwrelay.core.remotewrite.V2SeriesView;
import io.prwrelay.core.wire.ScratchMemory;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds one request per tenant from the series of a PRW 2.0 request, either as PRW 2.0 with a
 * symbols table of the tenant's own ({@link Format#V2}) or converted to PRW 1.0 ({@link Format#V1},
 * see {@link V1FromV2Writer}).
 *
 * <p>While the request is read, {@link #addSeries} records each series' byte range and refs under
 * its tenant slot. {@link #encode} then handles one slot at a time: it collects the refs the slot's
 * series use (labels, minus a removed tenant label; exemplar labels; metadata help and unit), sizes
 * the batch, and writes it in place into one pooled heap buffer of that size.
 *
 * <p><b>PRW 2.0 batches</b> carry only the symbols their own series reference, so no string of one
 * tenant reaches another tenant's request ({@link V2FromV2Writer}).
 *
 * <p><b>Output bound.</b> What {@link #encode} writes may be far larger than the request: PRW 1.0
 * repeats a symbol in every series, exemplar and metadata entry that references it, and each PRW
 * 2.0 batch repeats the symbols its tenant uses. So the batches of one request may take at most
 * {@code maxBytes} together, and no more than the caller's {@link MemoryGrant} allows: each batch
 * is sized exactly before its buffer is allocated ({@link V1FromV2Writer#size} and {@link
 * V2FromV2Writer#size} count without writing), and the running sum is checked against both before
 * every allocation. Nothing is written anywhere else first: the buffer is the only copy. A request
 * over the bound gets {@link RequestError.Kind#TOO_LARGE} and no batch; one the grant refuses,
 * {@link RequestError.Kind#OVER_BUDGET}.
 *
 * <p>The per-series and per-symbol arrays grow in a {@link ScratchMemory} and are reused; after
 * warm-up no allocation happens per series or per label, and {@link #encode} allocates one pooled
 * buffer per tenant. A store per byte into a heap array costs less than the many small writes into
 * a pooled direct buffer that re-encoding every ref takes. Not thread-safe.
 */
public final class V2BatchEncoder {
  /** The protocol of the batches {@link #encode} writes. */
  public enum Format {
    /** PRW 2.0 {@code io.prometheus.write.v2.Request}, with a minimal symbols table per tenant. */
    V2,
    /** PRW 1.0 {@code prometheus.WriteRequest}, for downstreams that accept only 1.0. */
    V1
  }

  private final V2SeriesRecords records;
  private final V1FromV2Writer v1;
  private final V2FromV2Writer v2;
  private final List<TenantBatch> pool = new ArrayList<>();

  /** An encoder whose scratch arrays grow without a grant, kept between requests up to a bound. */
  public V2BatchEncoder() {
    this(new ScratchMemory());
  }

  /**
   * @param scratch where the per-series and per-symbol arrays grow
   */
  public V2BatchEncoder(ScratchMemory scratch) {
    this.records = new V2SeriesRecords(scratch);
    this.v1 = new V1FromV2Writer(records, scratch);
    this.v2 = new V2FromV2Writer(records, scratch);
  }

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
   * Writes every slot's batch, unless together they would take more than {@code maxBytes} or more
   * than {@code grant} allows.
   *
   * @param format the protocol of the batches
   * @param tenants tenant ID per slot
   * @param alloc where batch buffers come from: each batch gets exactly one pooled heap buffer,
   *     written in place, of its exact size (PRW 2.0: {@link V2FromV2Writer#SLACK} bytes more)
   * @param maxBytes most bytes the batches of this request may take together ({@code
   *     relay.server.max-decompressed-bytes}, at most {@code Integer.MAX_VALUE - 8})
   * @param grant asked for the running total of the batches' buffers before each is allocated (the
   *     total so far, as {@link MemoryGrant#reserve} takes it)
   * @param out receives one {@link TenantBatch} per slot, in slot order; the batches own their
   *     buffers. A batch is added as soon as its buffer is allocated, so a caller that clears
   *     {@code out} after an exception releases everything
   * @return {@code null}; or a {@link RequestError.Kind#TOO_LARGE} error when the batches would
   *     take more than {@code maxBytes}, a {@link RequestError.Kind#OVER_BUDGET} one when {@code
   *     grant} refused them; then {@code out} is as it was (what was added is released)
   */
  public RequestError encode(
      Format format,
      String[] tenants,
      ByteBufAllocator alloc,
      int maxBytes,
      MemoryGrant grant,
      List<TenantBatch> out) {
    int first = out.size();
    V2SeriesRecords r = records;
    long total = 0;
    for (int slot = 0; slot < r.slots; slot++) {
      // Sized before anything is allocated for it: the running sum is the whole check.
      long size = size(format, slot);
      total += size;
      if (total > maxBytes) {
        releaseFrom(first, out);
        return tooLarge(format, total + sizeAfter(format, slot), maxBytes);
      }
      if (!grant.reserve(buffers(format, total, slot + 1))) {
        // Asked once more for the whole, so that the grant's refusal concerns all the batches
        // (one that could never hold them all is a different answer from one busy now).
        long whole = total + sizeAfter(format, slot);
        if (whole > maxBytes) {
          releaseFrom(first, out);
          return tooLarge(format, whole, maxBytes);
        }
        if (!grant.reserve(buffers(format, whole, r.slots))) {
          releaseFrom(first, out);
          return overBudget(format, whole);
        }
        size(format, slot); // sizing the others replaced this slot's sizing state
      }
      TenantBatch b = batch(first + slot);
      b.tenant = tenants[slot];
      b.series = r.slotSeries[slot];
      b.samples = r.slotSamples[slot];
      b.exemplars = r.slotExemplars[slot];
      b.histograms = r.slotHistograms[slot];
      b.metadata = r.slotMetadata[slot];
      int capacity = (int) buffers(format, size, 1);
      b.content = alloc.heapBuffer(capacity, capacity);
      out.add(b);
      ByteBuf buf = b.content;
      if (!buf.hasArray()) {
        throw new IllegalStateException("a heap buffer without an array: " + buf);
      }
      int at = buf.arrayOffset() + buf.writerIndex();
      if (format == Format.V1) {
        b.metadata = v1.write(slot, (int) size, buf.array(), at);
      } else {
        v2.write(slot, (int) size, buf.array(), at);
      }
      buf.writerIndex(buf.writerIndex() + (int) size);
    }
    return null;
  }

  /**
   * The bytes of the buffers of {@code slots} batches of {@code size} bytes together: a PRW 2.0
   * batch's buffer has {@link V2FromV2Writer#SLACK} bytes more, where a series is written before
   * its length prefix is known.
   */
  private static long buffers(Format format, long size, int slots) {
    return format == Format.V1 ? size : size + (long) V2FromV2Writer.SLACK * slots;
  }

  /**
   * Sizes slot {@code slot} exactly for writing, without writing ({@link V1FromV2Writer#size},
   * {@link V2FromV2Writer#size}).
   */
  private long size(Format format, int slot) {
    return format == Format.V1 ? v1.size(slot) : v2.size(slot);
  }

  /** The sizes of the slots after {@code slot} (each sized in turn, nothing written). */
  private long sizeAfter(Format format, int slot) {
    long size = 0;
    for (int s = slot + 1; s < records.slots; s++) {
      size += size(format, s);
    }
    return size;
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
    return v2.usesEverySymbol(0);
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
   * The error for a request whose batches would take {@code total} bytes, over {@code maxBytes}.
   */
  private static RequestError tooLarge(Format format, long total, int maxBytes) {
    return RequestError.tooLarge(
        built(format, total)
            + ", more than relay.server.max-decompressed-bytes="
            + maxBytes
            + (format == Format.V1
                ? " (PRW 1.0 repeats a string in every series that references it)"
                : " (each tenant's request carries its own copy of the symbols it references)"));
  }

  /** The error for a request whose batches, {@code total} bytes, the grant refused. */
  private static RequestError overBudget(Format format, long total) {
    return RequestError.overBudget(built(format, total) + ", more than the memory granted");
  }

  /** What building the batches would take, {@code total} bytes. */
  private static String built(Format format, long total) {
    return format == Format.V1
        ? "converting this PRW 2.0 request to PRW 1.0 would take " + total + " bytes"
        : "splitting this PRW 2.0 request by tenant would take " + total + " bytes";
  }

  private TenantBatch batch(int index) {
    while (pool.size() <= index) {
      pool.add(new TenantBatch());
    }
    return pool.get(index);
  }
}
