/**
 * The relay assembled: {@link io.prwrelay.server.app.RelayServer} builds the event loops, the
 * ingress, the lanes, the downstream client and the metrics from one {@code RelayConfig}, hands
 * each component only its section, and runs the lifecycle (start, readiness, graceful shutdown).
 */
package io.prwrelay.server.app;
