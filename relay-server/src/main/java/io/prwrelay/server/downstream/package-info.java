/**
 * The client of the downstream Cortex/Mimir push endpoint. {@link
 * io.prwrelay.server.downstream.TenantSender} is the seam: one attempt for one tenant batch, its
 * result an {@link io.prwrelay.server.downstream.AttemptOutcome} that never fails (a transport
 * problem is an outcome). {@link io.prwrelay.server.downstream.DownstreamClient} implements it over
 * pooled keep-alive HTTP/1.1 connections, one {@code LoopConnections} per event loop (no locks),
 * the request head encoded once ({@code RequestHead}) and the response read from its bytes ({@code
 * ResponseParser}: status, framing, {@code Retry-After}, the {@code *-Written} counts). Retries and
 * their backoff ({@link io.prwrelay.server.downstream.RetryPolicy}) are the lanes' decision ({@code
 * io.prwrelay.server.lane}). {@link io.prwrelay.server.downstream.DownstreamCheck} pushes an empty
 * request once at startup.
 */
package io.prwrelay.server.downstream;
