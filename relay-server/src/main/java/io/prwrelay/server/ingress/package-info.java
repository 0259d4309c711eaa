/**
 * The HTTP/1.1 edge: every accepted connection, up to the moment a write request's body is complete
 * and handed to the write pipeline, and from its answer back to the sender.
 *
 * <p>In request order: {@link io.prwrelay.server.ingress.HttpIngress} sets up each connection (TLS
 * when configured, {@code TlsDetector} and {@code IngressTls}; beyond the connection bound {@code
 * OverloadedHandler}), Netty's codec with the header names senders send shared ({@code
 * IngressDecoder}, {@code SmallHeaders}), the request head's timeout ({@code RequestHeadTimeout})
 * and {@code IngressHandler}, a state machine that takes one request at a time: the head ({@code
 * RequestHead}: 4xx/5xx for one it cannot serve), credentials ({@code InboundAuth}, 401), the write
 * request's head ({@code WriteRequestCheck}: 415, 413), its sender and its first body buffer
 * against the memory budget (503), the body ({@code IncomingWrite}, within {@code BodyTimer}'s
 * deadlines), then the pipeline. Pipelined requests wait their turn ({@code Pipelining}), answers
 * go out in request order ({@code AnswerWriter}, which turns each {@link
 * io.prwrelay.server.write.Answer} into its response), and an answer given before the body was read
 * closes the connection through {@code LingeringClose}. Everything but a write goes to {@code
 * AdminHandler} ({@code AdminEndpoint}: {@code /metrics}, health, readiness, the tenant pages;
 * {@code ServerState}).
 *
 * <p>The seam: a complete write request becomes one {@link io.prwrelay.server.write.WriteInput}
 * (its body handed over, its budget reservation lent) given to {@link
 * io.prwrelay.server.write.WriteProcessor#process}, which answers once. Uses {@code write} and the
 * packages below it ({@code metrics}, {@code insight}, {@code lane}, {@code config}, {@code
 * protocol}); nothing below uses this package.
 */
package io.prwrelay.server.ingress;
