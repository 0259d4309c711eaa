package io.prwrelay.core.encode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.codec.MemoryGrant;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.remotewrite.V2RequestReader;
import io.prwrelay.core.remotewrite.V2RequestVisitor;
import io.prwrelay.core.remotewrite.V2SeriesView;
import io.prwrelay.core.wire.HeapBuffers;
import io.prwrelay.core.wire.ScratchMemory;
import java.util.ArrayList;
import java.util.List;

/**
 * Converts one whole PRW 2.0 request to a PRW 1.0 {@code WriteRequest}, without routing: for a
 * tenant batch that was written as 2.0 and must go to a downstream found to accept only 1.0 (the
 * {@code auto} protocol falling back after a 415), or for a whole request sent to one trusted
 * tenant. The mapping is {@link V1FromV2Writer}'s; the input is validated by {@link
 * V2RequestReader} like any request, and the output is sized before it is allocated: one that would
 * pass the caller's bound, or that the caller's {@link MemoryGrant} refuses, is an error, not a
 * buffer. The reader's and encoder's arrays grow in one {@link ScratchMemory}.
 *
 * <p>Reusable and not thread-safe: one converter per thread.
 */
public final class V2ToV1Converter implements V2RequestVisitor {
  private final V2RequestReader reader;
  private final V2BatchEncoder encoder;
  private final List<TenantBatch> out = new ArrayList<>(1);
  private final String[] tenant = new String[1];

  /** A converter with scratch memory of its own, granted without limit. */
  public V2ToV1Converter() {
    this(new ScratchMemory());
  }

  /**
   * @param scratch where the reader's and encoder's arrays grow
   */
  public V2ToV1Converter(ScratchMemory scratch) {
    this.reader = new V2RequestReader(List.of(), scratch);
    this.encoder = new V2BatchEncoder(scratch);
  }

  /**
   * The outcome of {@link #convert}: either {@code content} (owned by the caller, who must release
   * it exactly once) with its counts, or an {@code error} and no content.
   *
   * @param content the PRW 1.0 request, or {@code null} when {@code error} is set
   * @param counts series, samples, exemplars and histograms carried, counted from tags
   * @param metadata number of {@code MetricMetadata} entries written
   * @param error why the input is not a valid PRW 2.0 request, its conversion would pass the bound
   *     ({@link RequestError.Kind#TOO_LARGE}) or the grant refused its memory ({@link
   *     RequestError.Kind#OVER_BUDGET}), or {@code null}
   */
  public record Conversion(
      ByteBuf content, SeriesCounts counts, int metadata, RequestError error) {}

  /**
   * Converts {@code request}.
   *
   * @param request borrowed; the decompressed PRW 2.0 request between its reader and writer index.
   *     Read in place when it has a backing array, otherwise copied once into a temporary heap
   *     buffer.
   * @param alloc allocator of the result's one exact-size heap buffer (and the temporary copy)
   * @param maxBytes most bytes the PRW 1.0 request may take ({@code
   *     relay.server.max-decompressed-bytes}); nothing of that size is allocated for a larger one
   */
  public Conversion convert(ByteBuf request, ByteBufAllocator alloc, int maxBytes) {
    return convert(request, alloc, maxBytes, MemoryGrant.UNLIMITED);
  }

  /**
   * Converts {@code request} within {@code grant}.
   *
   * @param request borrowed, as above
   * @param alloc as above
   * @param maxBytes as above
   * @param grant asked for the PRW 1.0 request's size before it is allocated; the scratch memory's
   *     grant is the caller's to set ({@link ScratchMemory#start})
   */
  public Conversion convert(
      ByteBuf request, ByteBufAllocator alloc, int maxBytes, MemoryGrant grant) {
    int length = request.readableBytes();
    ByteBuf heap = HeapBuffers.heap(request, alloc);
    try {
      byte[] array = heap.array();
      int offset = HeapBuffers.arrayStart(heap);
      encoder.reset(array, reader.symbols());
      encoder.openSlot();
      RequestError error = reader.read(array, offset, length, this);
      if (error != null) {
        return new Conversion(null, null, 0, error);
      }
      try {
        error = encoder.encode(V2BatchEncoder.Format.V1, tenant, alloc, maxBytes, grant, out);
        if (error != null) {
          return new Conversion(null, null, 0, error);
        }
        TenantBatch b = out.get(0);
        return new Conversion(b.takeContent(), b.counts(), b.metadata(), null);
      } finally {
        BatchEncoder.releaseAll(out);
      }
    } catch (ScratchMemory.Refused e) {
      return new Conversion(
          null, null, 0, RequestError.overBudget("reading this PRW 2.0 request to convert it"));
    } finally {
      if (heap != request) {
        heap.release();
      }
    }
  }

  @Override
  public boolean onSeries(V2SeriesView series) {
    encoder.addSeries(0, series, false);
    return true;
  }
}
