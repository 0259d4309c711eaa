package io.prwrelay.server.write;

import io.prwrelay.server.lane.Fragment;
import java.util.List;

/**
 * What {@link RouteStage} makes of one decompressed write request: its {@link Batches}, one per
 * tenant, or a {@link Refusal}.
 */
sealed interface Routed permits Routed.Batches, Refusal {

  /**
   * The request's batches, one per tenant as a fragment not yet bound to its request ({@link
   * Fragment#unbound}), in order of each tenant's first series; empty when nothing of it is to be
   * delivered (every series dropped, or only metadata for tenants it may not write).
   *
   * @param list every fragment's body is owned by whoever holds the list
   * @param whole whether the one batch is the request itself, unchanged: its compressed body, when
   *     it is snappy, is the batch's snappy block
   * @param limited the tenants whose series limit left series of the request out, with how many
   */
  record Batches(List<Fragment> list, boolean whole, List<LimitedSeries> limited)
      implements Routed {
    /** Batches with no series left out by a limit. */
    Batches(List<Fragment> list, boolean whole) {
      this(list, whole, List.of());
    }
  }
}
