package io.prwrelay.core.encode;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.remotewrite.SeriesView;
import io.prwrelay.core.remotewrite.WriteRequestReader;
import io.prwrelay.core.remotewrite.WriteRequestVisitor;
import io.prwrelay.core.wire.HeapBuffers;
import java.util.List;

/**
 * Counts the series (and, when asked, the samples, exemplars and histograms) of a whole PRW 1.0
 * {@code WriteRequest} that is forwarded without routing (its tenant comes from a trusted header),
 * validating it on the way like {@code TenantRouter} does: the same reader, the same typed errors,
 * no batch written.
 *
 * <p>Reusable and not thread-safe: one counter per event loop thread.
 */
public final class WriteRequestCounter implements WriteRequestVisitor {
  private final WriteRequestReader reader;
  private final SeriesTally tally = new SeriesTally();

  /**
   * @param countSamples whether to count samples, exemplars and histograms (every field of every
   *     series is then walked and checked), or only series, reading each up to its {@code __name__}
   *     label like a router that does not count ({@code TenantRules#countSamples()})
   */
  public WriteRequestCounter(boolean countSamples) {
    // The reader needs a tenant label to look for; counting does not care which.
    this.reader = new WriteRequestReader(List.of("__name__"), countSamples);
  }

  /**
   * Reads {@code request} whole.
   *
   * @param request borrowed; the decompressed request between its reader and writer index. Read in
   *     place when it has a backing array, otherwise copied once into a temporary heap buffer.
   * @param alloc source of that temporary copy
   * @return {@code null} when the request is valid ({@link #counts()} then holds its counts),
   *     otherwise what is wrong with it
   */
  public RequestError count(ByteBuf request, ByteBufAllocator alloc) {
    tally.reset();
    ByteBuf heap = HeapBuffers.heap(request, alloc);
    try {
      return reader.read(heap.array(), HeapBuffers.arrayStart(heap), request.readableBytes(), this);
    } finally {
      if (heap != request) {
        heap.release();
      }
    }
  }

  /** What the last valid request of {@link #count} carried. */
  public SeriesCounts counts() {
    return tally.counts();
  }

  @Override
  public boolean onSeries(SeriesView view) {
    tally.add(view);
    return true;
  }

  @Override
  public void onMetadata(int start, int end) {}
}
