package io.prwrelay.server.write;

import io.prwrelay.server.protocol.Protocol;

/**
 * What the head of a write request says about its body, as the write pipeline needs it: read and
 * checked by the ingress before the body ({@code ingress.WriteRequestCheck}), handed over with the
 * body in its {@link WriteInput}. A value, holding no buffer.
 *
 * @param encoding the body's compression, from its {@code Content-Encoding}
 * @param protocol the message the body holds, from its {@code Content-Type}
 * @param incomingTenant value of the tenant header when it is trusted, else {@code null}
 * @param senderRetries how often the sender says it sent the request before ({@code
 *     Retry-Attempt}), 0 for none; passed on to the downstream with the relay's own retries
 */
public record WriteHead(
    BodyEncoding encoding, Protocol protocol, String incomingTenant, int senderRetries) {}
