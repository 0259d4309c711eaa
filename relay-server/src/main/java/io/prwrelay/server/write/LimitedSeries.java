package io.prwrelay.server.write;

/**
 * Series of one tenant that a request carried and the tenant's series limit left out at the route
 * step ({@code relay.limits.max-series-per-tenant}): what the answer names.
 *
 * @param tenant the tenant ID
 * @param series series of the request left out
 * @param maxSeries the tenant's limit of active series
 */
record LimitedSeries(String tenant, int series, long maxSeries) {}
