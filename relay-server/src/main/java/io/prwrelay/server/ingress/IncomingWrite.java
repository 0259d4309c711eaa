package io.prwrelay.server.ingress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.prwrelay.server.config.ServerConfig;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.write.Answer;
import io.prwrelay.server.write.InflightBudget;
import io.prwrelay.server.write.SenderKey;
import io.prwrelay.server.write.TenantAllowList;
import io.prwrelay.server.write.WriteInput;
import io.prwrelay.server.write.WriteProcessor;

/**
 * A write request whose body is being received: its head, what the checks made of it, its sender,
 * its share of the {@link InflightBudget}, and its body, collected into one pooled direct buffer
 * whose maximum capacity is the declared length, or {@code relay.server.max-request-bytes} for a
 * chunked body. The buffer starts small and grows as the body's bytes arrive, the reservation grown
 * to each next capacity before it is allocated: what a request holds follows what it sent, not what
 * it declared.
 *
 * <p>Owns its body and its reservation: {@link #takeInput} hands the body over when it is complete
 * (the reservation stays held until the request is answered), {@link #abort} releases both when the
 * request ends before that. One per request, on the connection's event loop.
 */
final class IncomingWrite {
  final HttpRequest head;
  final WriteRequestCheck.Accepted accepted;
  final long startNanos;
  final InflightBudget.Reservation reservation;
  final TenantAllowList allowed;
  final SenderKey sender;
  private ByteBuf body;

  /**
   * @param startNanos when the request started, on the loop's ticker
   * @param reservation takes ownership; the request's share of the budget, holding {@code body}
   * @param sender who sent it
   * @param body takes ownership; the body's first buffer, empty, its maximum capacity the declared
   *     length or the cap
   */
  IncomingWrite(
      HttpRequest head,
      WriteRequestCheck.Accepted accepted,
      long startNanos,
      InflightBudget.Reservation reservation,
      TenantAllowList allowed,
      SenderKey sender,
      ByteBuf body) {
    this.head = head;
    this.accepted = accepted;
    this.startNanos = startNanos;
    this.reservation = reservation;
    this.allowed = allowed;
    this.sender = sender;
    this.body = body;
  }

  /**
   * Appends the chunk of {@code content} to the body.
   *
   * @param content borrowed
   * @return {@code null} when it was appended; else the answer that ends the request (the caller
   *     then {@linkplain #abort aborts} it): 413 when the body passes the cap, 503 when the budget
   *     has no room for the body's next buffer (counted), 400 when the chunk is malformed
   */
  Answer append(
      HttpContent content, ByteBufAllocator alloc, InflightBudget budget, RelayMetrics metrics) {
    ByteBuf chunk = content.content();
    if (chunk.readableBytes() > body.maxWritableBytes()) {
      return Answer.closing(
          413, "request body exceeds " + ServerConfig.MAX_REQUEST_BYTES.setTo(body.maxCapacity()));
    }
    if (chunk.readableBytes() > body.writableBytes()) {
      // The buffer's next capacity is reserved before it is allocated.
      int capacity =
          alloc.calculateNewCapacity(
              body.writerIndex() + chunk.readableBytes(), body.maxCapacity());
      InflightBudget.Refusal refusal = reservation.growTo(capacity);
      if (refusal != null) {
        metrics.inflightRejected(refusal.tag);
        return budget.refused(refusal, true);
      }
    }
    body.writeBytes(chunk);
    if (content.decoderResult().isFailure()) {
      // The last chunk's trailer section is decoded with the head's bounds (431 past them).
      return RequestHead.undecoded(content.decoderResult().cause(), "trailer", "body");
    }
    return null;
  }

  /**
   * The complete request, for the write pipeline: its body handed over (the input holds the only
   * reference, which {@link WriteProcessor#process} takes), its reservation lent (it stays held,
   * for the caller to release once the request is answered).
   *
   * @param loop the connection's event loop
   * @param alloc the connection's allocator
   */
  WriteInput takeInput(EventLoop loop, ByteBufAllocator alloc) {
    ByteBuf b = body;
    body = null;
    return new WriteInput(
        loop, alloc, b, reservation, accepted.head(), allowed, sender, startNanos);
  }

  /** Ends the request before its body was taken: releases body and budget. */
  void abort() {
    reservation.release();
    if (body != null) {
      body.release();
      body = null;
    }
  }
}
