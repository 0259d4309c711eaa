package io.prwrelay.core.route;

/**
 * Which series of a tenant may pass the route step: the per-tenant series limit, consulted by the
 * routers for every series of a tenant that has one, before the series is spliced into its batch. A
 * series its tenant's {@link Gate} does not admit is left out of the batch and recorded in {@link
 * RouteResult#limited()}; the other series of the tenant, and every other tenant, go on as before.
 *
 * <p>The routers ask {@link #gate} once per tenant and request (when the tenant's batch slot opens)
 * and {@link Gate#admit} once per series with the series' label set hash, the same hash the tenant
 * insight counts ({@link io.prwrelay.core.remotewrite.LabelSetHasher}, keyed): a router that both
 * digests and limits hashes each series once.
 */
public interface SeriesLimits {
  /** No tenant is limited: the routers do not even hash for it. */
  SeriesLimits NONE = tenant -> null;

  /**
   * The gate of {@code tenant}'s series, or {@code null} when its series are not limited. Called on
   * the routing thread, once per tenant and request.
   */
  Gate gate(String tenant);

  /** One tenant's admission of series; shared by the routers of every event loop. */
  interface Gate {
    /**
     * Whether the series whose label set hashes to {@code labelSetHash} may be sent. Thread-safe,
     * allocates nothing.
     */
    boolean admit(long labelSetHash);
  }
}
