/**
 * Which tenant each series belongs to, and one batch per tenant. {@link
 * io.prwrelay.core.route.TenantRouter} (PRW 1.0) and {@link io.prwrelay.core.route.V2TenantRouter}
 * (PRW 2.0) read a request, resolve each series' tenant by {@link
 * io.prwrelay.core.route.TenantRules} through the byte-keyed {@link
 * io.prwrelay.core.route.TenantTable} (no {@code String} once a value was seen; invalid IDs per
 * {@link io.prwrelay.core.route.TenantIds} count as missing) and hand the series to the encoders;
 * the result is a {@link io.prwrelay.core.route.RouteResult}. One router per event loop, not
 * thread-safe. Metadata without series is routed by the metric families each sender recently sent
 * ({@link io.prwrelay.core.route.MetricFamilies}, taught by {@link
 * io.prwrelay.core.route.FamilyLearner}, shared by all loops under one lock; {@link
 * io.prwrelay.core.route.MetadataRouting}).
 */
package io.prwrelay.core.route;
