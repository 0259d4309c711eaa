package io.prwrelay.core.encode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.remotewrite.SeriesView;
import io.prwrelay.core.wire.ScratchMemory;
import io.prwrelay.core.wire.WireTags;
import io.prwrelay.core.wire.WriteRequestFields;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Splices series into per-tenant batches without re-encoding them.
 *
 * <p>Two passes. While the request is read, {@link #addSeries} records byte ranges ("segments") per
 * tenant slot, merging a series into the previous segment when it directly follows it for the same
 * tenant, and sums each slot's output size. {@link #encode} then allocates one buffer of the exact
 * size per tenant and copies the segments, so a run of same-tenant series costs one copy and no
 * buffer ever grows. A series whose tenant label must be removed becomes a rewrite segment: a fresh
 * tag and length, then the series content before and after the removed {@code Label} field.
 *
 * <pre>
 * copy:    [start, end)                               -- the series field bytes as received
 * rewrite: 0x0A varint(newLen) [contentStart, cutStart) [cutEnd, end)
 * </pre>
 *
 * <p>The per-segment and per-metadata arrays grow in a {@link ScratchMemory} and are reused: after
 * warm-up no allocation happens per series or per label; {@link #encode} allocates one pooled
 * buffer per large tenant batch and one shared by all small ones, {@link #bytes} in all, which the
 * caller checks against its budget first. The per-slot arrays grow up to {@code
 * relay.tenant.max-per-request} slots (40 bytes a slot). Not thread-safe.
 */
public final class BatchEncoder {
  /**
   * Batches smaller than this share one buffer per request ({@link #encode}); a relay sends such
   * batches uncompressed to their tenant's lane, which compresses them together with the others it
   * sends in the same downstream request.
   */
  public static final int SMALL_BATCH_BYTES = 16 * 1024;

  private static final int NO_CUT = -1;
  private static final int SEGMENTS = 64;
  private static final int METADATA = 16;

  private final ScratchMemory scratch;
  private byte[] array;

  private int segmentCount;
  private int[] segSlot = new int[SEGMENTS];
  private int[] segStart = new int[SEGMENTS];
  private int[] segEnd = new int[SEGMENTS];
  private int[] segContent = new int[SEGMENTS];
  private int[] segCutStart = new int[SEGMENTS];
  private int[] segCutEnd = new int[SEGMENTS];

  private int metaCount;
  private int metaFields;
  private int metaBytes;
  private int[] metaStart = new int[METADATA];
  private int[] metaEnd = new int[METADATA];

  private int slotCount;

  /** Series added with their tenant label cut out, in this request. */
  private int rewrites;

  private int[] slotBytes = new int[16];
  private int[] slotSeries = new int[16];
  private int[] slotMetadata = new int[16];
  private long[] slotSamples = new long[16];
  private long[] slotExemplars = new long[16];
  private long[] slotHistograms = new long[16];
  private int lastSlot = -1;

  private final List<TenantBatch> pool = new ArrayList<>();

  /** An encoder whose arrays grow without a grant, kept between requests up to a bound. */
  public BatchEncoder() {
    this(new ScratchMemory());
  }

  /**
   * @param scratch where the per-segment and per-metadata arrays grow
   */
  public BatchEncoder(ScratchMemory scratch) {
    this.scratch = scratch;
    scratch.register(
        () -> {
          segSlot = new int[SEGMENTS];
          segStart = new int[SEGMENTS];
          segEnd = new int[SEGMENTS];
          segContent = new int[SEGMENTS];
          segCutStart = new int[SEGMENTS];
          segCutEnd = new int[SEGMENTS];
          metaStart = new int[METADATA];
          metaEnd = new int[METADATA];
        });
  }

  /**
   * Starts a request.
   *
   * @param array borrowed; the request bytes every later offset refers to
   */
  public void reset(byte[] array) {
    this.array = array;
    segmentCount = 0;
    metaCount = 0;
    metaFields = 0;
    metaBytes = 0;
    slotCount = 0;
    rewrites = 0;
    lastSlot = -1;
  }

  /**
   * Opens the next tenant slot and returns its number; slots are numbered from 0 in opening order.
   */
  public int openSlot() {
    if (slotCount == slotBytes.length) {
      int n = slotCount * 2;
      slotBytes = Arrays.copyOf(slotBytes, n);
      slotSeries = Arrays.copyOf(slotSeries, n);
      slotMetadata = Arrays.copyOf(slotMetadata, n);
      slotSamples = Arrays.copyOf(slotSamples, n);
      slotExemplars = Arrays.copyOf(slotExemplars, n);
      slotHistograms = Arrays.copyOf(slotHistograms, n);
    }
    int slot = slotCount++;
    slotBytes[slot] = 0;
    slotSeries[slot] = 0;
    slotMetadata[slot] = 0;
    slotSamples[slot] = 0;
    slotExemplars[slot] = 0;
    slotHistograms[slot] = 0;
    return slot;
  }

  /**
   * Adds a series to a slot.
   *
   * @param series borrowed view of the series
   * @param removeTenantLabel drop the series' matched tenant label ({@link SeriesView#labelStart()}
   *     to {@link SeriesView#labelEnd()}) from the copy
   */
  public void addSeries(int slot, SeriesView series, boolean removeTenantLabel) {
    int start = series.start();
    int end = series.end();
    slotSeries[slot]++;
    slotSamples[slot] += series.samples();
    slotExemplars[slot] += series.exemplars();
    slotHistograms[slot] += series.histograms();
    boolean cut = removeTenantLabel && series.tenantLabel() != SeriesView.NO_TENANT_LABEL;
    if (!cut) {
      slotBytes[slot] += end - start;
      int last = segmentCount - 1;
      if (last >= 0 && lastSlot == slot && segEnd[last] == start && segCutStart[last] == NO_CUT) {
        segEnd[last] = end;
        return;
      }
      addSegment(slot, start, end, start, NO_CUT, NO_CUT);
      return;
    }
    rewrites++;
    int contentLength = end - series.contentStart() - (series.labelEnd() - series.labelStart());
    slotBytes[slot] += 1 + WireTags.varint32Size(contentLength) + contentLength;
    addSegment(slot, start, end, series.contentStart(), series.labelStart(), series.labelEnd());
  }

  private void addSegment(int slot, int start, int end, int content, int cutStart, int cutEnd) {
    if (segmentCount == segSlot.length) {
      int n = segmentCount * 2;
      scratch.charge(6L * Integer.BYTES * segmentCount);
      segSlot = Arrays.copyOf(segSlot, n);
      segStart = Arrays.copyOf(segStart, n);
      segEnd = Arrays.copyOf(segEnd, n);
      segContent = Arrays.copyOf(segContent, n);
      segCutStart = Arrays.copyOf(segCutStart, n);
      segCutEnd = Arrays.copyOf(segCutEnd, n);
    }
    int i = segmentCount++;
    segSlot[i] = slot;
    segStart[i] = start;
    segEnd[i] = end;
    segContent[i] = content;
    segCutStart[i] = cutStart;
    segCutEnd[i] = cutEnd;
    lastSlot = slot;
  }

  /** Bytes of the metadata fields recorded for this request, tags included. */
  public long metadataBytes() {
    return metaBytes;
  }

  /** Slots opened for this request: the number of batches {@link #encode} writes. */
  public int slots() {
    return slotCount;
  }

  /**
   * Adds a metadata field {@code [start, end)} (tag included) to one slot only, copied where it
   * lies among the slot's other fields; {@link #encode} counts it in that batch's {@link
   * TenantBatch#metadata()}.
   */
  public void addMetadata(int slot, int start, int end) {
    slotMetadata[slot]++;
    slotBytes[slot] += end - start;
    int last = segmentCount - 1;
    if (last >= 0 && lastSlot == slot && segEnd[last] == start && segCutStart[last] == NO_CUT) {
      segEnd[last] = end;
      return;
    }
    addSegment(slot, start, end, start, NO_CUT, NO_CUT);
  }

  /** Series added to {@code slot} in this request. */
  public int series(int slot) {
    return slotSeries[slot];
  }

  /** Series added with their tenant label removed in this request: each is written anew. */
  public int rewrites() {
    return rewrites;
  }

  /**
   * Records a metadata field {@code [start, end)} (tag included) that {@link #encode} may copy into
   * every batch.
   */
  public void addMetadata(int start, int end) {
    metaBytes += end - start;
    if (metaCount > 0 && metaEnd[metaCount - 1] == start) {
      metaEnd[metaCount - 1] = end;
      metaFields++;
      return;
    }
    if (metaCount == metaStart.length) {
      scratch.charge(2L * Integer.BYTES * metaCount);
      metaStart = Arrays.copyOf(metaStart, metaCount * 2);
      metaEnd = Arrays.copyOf(metaEnd, metaCount * 2);
    }
    metaStart[metaCount] = start;
    metaEnd[metaCount] = end;
    metaCount++;
    metaFields++;
  }

  /**
   * The bytes {@link #encode} allocates for this request's batches: each slot's series and
   * metadata, plus, {@code withMetadata}, every recorded metadata field once per slot.
   */
  public long bytes(boolean withMetadata) {
    long total = 0;
    for (int slot = 0; slot < slotCount; slot++) {
      total += slotBytes[slot] + (withMetadata ? metaBytes : 0);
    }
    return total;
  }

  /**
   * Writes every slot's batch.
   *
   * <p>Batches of at least {@link #SMALL_BATCH_BYTES} get one buffer each. The smaller ones share
   * one buffer, each holding a slice of it: a request spread over many tenants costs one allocation
   * instead of one per tenant, and the shared buffer is freed once every small batch is released
   * (each release of a small batch returns one reference to it).
   *
   * @param tenants tenant ID per slot
   * @param withMetadata copy every metadata field recorded for all batches ({@link
   *     #addMetadata(int, int)}) into every batch
   * @param alloc where batch buffers come from
   * @param out receives one {@link TenantBatch} per slot, in slot order; the batches own their
   *     buffers (a small batch owns one reference to the shared buffer)
   */
  public void encode(
      String[] tenants, boolean withMetadata, ByteBufAllocator alloc, List<TenantBatch> out) {
    int first = out.size();
    long sharedBytes = 0;
    int shared = 0;
    for (int slot = 0; slot < slotCount; slot++) {
      int size = slotBytes[slot] + (withMetadata ? metaBytes : 0);
      TenantBatch b = batch(first + slot);
      b.tenant = tenants[slot];
      b.content = null;
      b.series = slotSeries[slot];
      b.samples = slotSamples[slot];
      b.exemplars = slotExemplars[slot];
      b.histograms = slotHistograms[slot];
      b.metadata = slotMetadata[slot] + (withMetadata ? metaFields : 0);
      out.add(b);
      if (size >= SMALL_BATCH_BYTES) {
        b.content = alloc.buffer(size, size);
      } else {
        sharedBytes += size;
        shared++;
      }
    }
    if (shared > 0) {
      share(withMetadata, alloc, out, first, (int) sharedBytes, shared);
    }
    byte[] a = array;
    for (int i = 0; i < segmentCount; i++) {
      ByteBuf buf = out.get(first + segSlot[i]).content;
      int cutStart = segCutStart[i];
      if (cutStart == NO_CUT) {
        buf.writeBytes(a, segStart[i], segEnd[i] - segStart[i]);
      } else {
        int content = segContent[i];
        int end = segEnd[i];
        int cutEnd = segCutEnd[i];
        buf.writeByte(WriteRequestFields.TIMESERIES_TAG);
        writeVarint32(buf, end - content - (cutEnd - cutStart));
        buf.writeBytes(a, content, cutStart - content);
        buf.writeBytes(a, cutEnd, end - cutEnd);
      }
    }
    if (withMetadata) {
      for (int slot = 0; slot < slotCount; slot++) {
        ByteBuf buf = out.get(first + slot).content;
        for (int m = 0; m < metaCount; m++) {
          buf.writeBytes(a, metaStart[m], metaEnd[m] - metaStart[m]);
        }
      }
    }
  }

  /**
   * Writes the batch of a request whose only slot holds every series unchanged: the request itself,
   * without a copy, metadata where the sender put it. Call only when {@link #slots()} is 1, {@link
   * #rewrites()} is 0 and the request holds nothing but its series and the metadata the batch
   * keeps.
   *
   * @param request borrowed; the request every offset of this encoder refers to, between its reader
   *     and writer index
   * @param withMetadata whether the request's metadata counts as the batch's (else it has none)
   * @param out receives one {@link TenantBatch} whose content is a retained slice of {@code
   *     request}, owned by the batch
   */
  public void encodeWhole(
      String tenant, ByteBuf request, boolean withMetadata, List<TenantBatch> out) {
    TenantBatch b = batch(out.size());
    b.tenant = tenant;
    b.series = slotSeries[0];
    b.samples = slotSamples[0];
    b.exemplars = slotExemplars[0];
    b.histograms = slotHistograms[0];
    b.metadata = withMetadata ? metaFields : 0;
    b.content = request.retainedSlice(request.readerIndex(), request.readableBytes());
    out.add(b);
  }

  /**
   * Gives every small batch of {@code out} a slice of one buffer of {@code bytes}; no allocation
   * happens after the shared buffer's, so a failure leaves no reference unowned.
   */
  private void share(
      boolean withMetadata,
      ByteBufAllocator alloc,
      List<TenantBatch> out,
      int first,
      int bytes,
      int shared) {
    ByteBuf block = alloc.buffer(bytes, bytes);
    if (shared == 1) {
      for (int slot = 0; slot < slotCount; slot++) {
        TenantBatch b = out.get(first + slot);
        if (b.content == null) {
          b.content = block;
          return;
        }
      }
    }
    block.retain(shared - 1);
    int offset = 0;
    for (int slot = 0; slot < slotCount; slot++) {
      TenantBatch b = out.get(first + slot);
      if (b.content == null) {
        int size = slotBytes[slot] + (withMetadata ? metaBytes : 0);
        b.content = block.slice(offset, size).clear();
        offset += size;
      }
    }
  }

  private TenantBatch batch(int index) {
    while (pool.size() <= index) {
      pool.add(new TenantBatch());
    }
    return pool.get(index);
  }

  /** Releases whatever the batches in {@code batches} still own and empties the list. */
  public static void releaseAll(List<TenantBatch> batches) {
    for (int i = 0; i < batches.size(); i++) {
      batches.get(i).release();
    }
    batches.clear();
  }

  private static void writeVarint32(ByteBuf buf, int value) {
    while ((value & ~0x7F) != 0) {
      buf.writeByte((value & 0x7F) | 0x80);
      value >>>= 7;
    }
    buf.writeByte(value);
  }
}
