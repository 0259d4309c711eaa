package io.prwrelay.server.write;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;

/**
 * One write request as the ingress hands it to the write pipeline ({@link WriteProcessor#process})
 * once its body is complete: the one value that crosses from the HTTP edge to the pipeline.
 *
 * <p>Ownership: the record holds the body's reference, which {@link WriteProcessor#process} takes
 * (and releases exactly once); the reservation stays the ingress's, which releases it once the
 * request is answered. Made on the connection's event loop, used on it, never kept.
 *
 * @param loop the connection's event loop: the request is processed on it and answered on it
 * @param alloc where the pipeline allocates what it makes of the body
 * @param body the compressed request body; {@link WriteProcessor#process} takes ownership
 * @param reservation the request's share of the memory budget, holding the compressed body; the
 *     pipeline grows it to hold what the body decompresses to, the tenant batches built of it and
 *     the scratch memory to build them, each before it is allocated ({@link RequestGrant});
 *     borrowed
 * @param head what the request's head says about the body
 * @param allowed tenants the request's credentials may write; a series of another one makes the
 *     whole request 403, with nothing delivered
 * @param sender who sent it: its metadata goes to the tenants it sent series of, its ledgers are
 *     its own
 * @param startNanos when the request started, on {@code loop}'s ticker
 */
public record WriteInput(
    EventLoop loop,
    ByteBufAllocator alloc,
    ByteBuf body,
    InflightBudget.Reservation reservation,
    WriteHead head,
    TenantAllowList allowed,
    SenderKey sender,
    long startNanos) {}
