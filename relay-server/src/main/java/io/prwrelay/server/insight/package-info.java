/**
 * The tenant insight behind {@code GET /tenants} and {@code GET /api/v1/tenants}: per tenant, the
 * active series estimated over a sliding window ({@link io.prwrelay.server.insight.TenantWindow}:
 * {@link io.prwrelay.server.insight.HyperLogLog} buckets of the label-set hashes the routers
 * digest), series/s, bytes/s and the top metric names ({@link io.prwrelay.server.insight.TopNames},
 * names held once in {@link io.prwrelay.server.insight.MetricNames}, bounded in count and bytes).
 * {@link io.prwrelay.server.insight.TenantInsight} holds the tenants; {@link
 * io.prwrelay.server.insight.TenantsPage} and {@link io.prwrelay.server.insight.TenantsJson} render
 * them, escaped ({@link io.prwrelay.server.insight.Escape}) and within {@link
 * io.prwrelay.server.insight.ResponseBound}.
 */
package io.prwrelay.server.insight;
