package io.prwrelay.server.write;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.core.encode.SeriesTally;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.remotewrite.V2RequestReader;
import io.prwrelay.core.remotewrite.V2RequestVisitor;
import io.prwrelay.core.remotewrite.V2SeriesView;
import io.prwrelay.core.wire.HeapBuffers;
import io.prwrelay.core.wire.ScratchMemory;
import java.util.List;

/**
 * Validates a whole PRW 2.0 request that goes unchanged to one tenant (a trusted tenant header) and
 * counts what it carries, with {@link V2RequestReader}'s checks: the request is forwarded only if
 * Cortex could accept it. Reusable, not thread-safe: one per event loop.
 */
final class V2Check implements V2RequestVisitor {
  private final V2RequestReader reader;
  private final SeriesTally tally = new SeriesTally();
  private RequestError error;

  /**
   * @param scratch where the reader's arrays grow
   */
  V2Check(ScratchMemory scratch) {
    this.reader = new V2RequestReader(List.of(), scratch);
  }

  /**
   * Checks {@code request}.
   *
   * @param request borrowed; the decompressed request between its reader and writer index
   * @param alloc source of a temporary heap copy when {@code request} has no backing array
   * @return {@code this}: read {@link #error()} (also {@link RequestError.Kind#OVER_BUDGET}, when
   *     the scratch memory's grant refused the reader's arrays) and {@link #counts()}
   */
  V2Check check(ByteBuf request, ByteBufAllocator alloc) {
    tally.reset();
    ByteBuf heap = HeapBuffers.heap(request, alloc);
    try {
      error =
          reader.read(heap.array(), HeapBuffers.arrayStart(heap), request.readableBytes(), this);
    } catch (ScratchMemory.Refused e) {
      error = RequestError.overBudget("reading this PRW 2.0 request");
    } finally {
      if (heap != request) {
        heap.release();
      }
    }
    return this;
  }

  /** Why the last request is not valid, or {@code null}. */
  RequestError error() {
    return error;
  }

  /** What the last request carries. */
  SeriesCounts counts() {
    return tally.counts();
  }

  @Override
  public boolean onSeries(V2SeriesView view) {
    tally.add(view);
    return true;
  }
}
