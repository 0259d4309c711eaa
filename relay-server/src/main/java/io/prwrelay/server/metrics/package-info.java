/**
 * The relay's own metrics, served by {@code GET /metrics}: every {@code relay_*} metric declared
 * once in {@link io.prwrelay.server.metrics.MetricCatalogue} (name, type, unit, help, tags; the
 * list in docs/metrics.md is checked against it) and built only through {@link
 * io.prwrelay.server.metrics.Metric}. {@link io.prwrelay.server.metrics.RelayMetrics} owns the
 * registry and counts the ingress; {@link io.prwrelay.server.metrics.LaneMetrics} and {@link
 * io.prwrelay.server.metrics.QueueMetrics} hear the lanes and the queues. At most {@code
 * relay.metrics.max-tenants} tenants get meters of their own ({@link
 * io.prwrelay.server.metrics.TenantAdmission}); the rest share {@code tenant="other"}.
 */
package io.prwrelay.server.metrics;
