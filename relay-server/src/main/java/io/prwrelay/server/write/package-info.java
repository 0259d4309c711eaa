/**
 * The write pipeline: one complete write request in, one {@link io.prwrelay.server.write.Answer}
 * out, on the connection's event loop.
 *
 * <p>In request order: {@link io.prwrelay.server.write.WriteProcessor} takes a {@link
 * io.prwrelay.server.write.WriteInput} (the body, what its head said: {@link
 * io.prwrelay.server.write.WriteHead}; its credentials' {@link
 * io.prwrelay.server.write.TenantAllowList} and {@link io.prwrelay.server.write.SenderKey}; its
 * share of the {@link io.prwrelay.server.write.InflightBudget}) and runs its stages, each in its
 * own class: {@code Decompression} (within the size caps and the budget: {@code RequestGrant}),
 * {@code RouteStage} (the loop's routers and checks, {@code LoopResources}, {@code V2Check}: one
 * batch per tenant, {@code Routed}, or a {@code Refusal}), {@code Delivery} (each tenant batch to
 * its lane, the ledger, {@code ThrottledDropLog}) and, from the batches' outcomes, the answer
 * ({@code AnswerPolicy}: the rules in its Javadoc, one function; {@code LimitedSeries}).
 *
 * <p>Ownership: {@code process} takes the compressed body and releases it once; every stage borrows
 * it. The reservation is the ingress's, grown here before each allocation and released by the
 * ingress once answered. Knows nothing of HTTP connections: the ingress turns the answer into a
 * response. Uses {@code metrics}, {@code insight}, {@code lane}, {@code limits}, {@code
 * downstream}, {@code config} and {@code protocol}, never {@code ingress}.
 */
package io.prwrelay.server.write;
