/**
 * The HTTP/1.1 ingress and the write pipeline behind it.
 *
 * <p><b>The edge.</b> {@link io.prwrelay.server.http.HttpIngress} sets up each connection: TLS when
 * configured, Netty's codec with the header names senders send shared ({@code IngressDecoder}), the
 * request head's timeout and {@code IngressHandler}, a state machine that takes one request at a
 * time: credentials ({@code InboundAuth}, 401), the head ({@code RequestHead}, {@code
 * WriteRequestCheck}: 4xx naming what is wrong), the sender ({@code SenderKey}), the memory budget
 * ({@code InflightBudget}, 503), the body ({@code IncomingWrite}), pipelined requests ({@code
 * Pipelining}) and the answers in request order ({@code AnswerWriter}). Everything but a write goes
 * to {@code AdminHandler} ({@code /metrics}, health, readiness, the tenant pages).
 *
 * <p><b>The pipeline.</b> {@code WriteProcessor} takes a complete body on its connection's event
 * loop: {@code Decompression} (within the budget: {@code RequestGrant}), {@code RouteStage} (the
 * loop's routers, {@code LoopResources}), {@code Delivery} (each tenant batch to its lane) and,
 * from the batches' outcomes, the answer ({@code AnswerPolicy}: the rules in its Javadoc, one
 * function).
 */
package io.prwrelay.server.http;
