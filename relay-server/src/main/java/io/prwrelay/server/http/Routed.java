package io.prwrelay.server.http;

import io.netty.buffer.ByteBuf;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.downstream.Protocol;
import java.util.List;

/**
 * What {@link RouteStage} makes of one decompressed write request: its {@link Batches}, one per
 * tenant, or a {@link Refusal}.
 */
sealed interface Routed permits Routed.Batches, Refusal {

  /**
   * The request's batches, in order of each tenant's first series; empty when nothing of it is to
   * be delivered (every series dropped, or only metadata for tenants it may not write).
   *
   * @param list every batch's content is owned by whoever holds the list
   */
  record Batches(List<Batch> list) implements Routed {}

  /**
   * One tenant's uncompressed batch in {@code protocol}, before it becomes a fragment.
   *
   * @param whole whether the batch is the request itself, unchanged: its compressed body, when it
   *     is snappy, is the batch's snappy block
   */
  record Batch(
      String tenant, Protocol protocol, ByteBuf content, SeriesCounts counts, boolean whole) {}
}
