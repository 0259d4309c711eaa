package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.VoidChannelPromise;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;

/**
 * Last handler of a pooled downstream connection, after Netty's response decoder, and the
 * connection as {@link LoopConnections} keeps it: hands the response of the current attempt back,
 * and fails the attempt when the connection breaks or its request cannot be written.
 */
final class ResponseHandler extends ChannelInboundHandlerAdapter implements ChannelFutureListener {
  /** Characters of a downstream body kept for messages. */
  private static final int MESSAGE_CHARS = 512;

  /** Outcomes of empty 2xx answers without written counts, the usual ones, made once. */
  private static final AttemptOutcome OK_200 = new AttemptOutcome(200, "", -1);

  private static final AttemptOutcome OK_204 = new AttemptOutcome(204, "", -1);

  private Channel channel;

  /** For the request head: a failed write shows on the body's write that follows it. */
  private ChannelPromise quietWrite;

  private Attempt attempt;

  /** The head of the response being read, and its body so far ({@code null} while empty). */
  private HttpResponse response;

  private ByteBuf body;

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    channel = ctx.channel();
    quietWrite = new VoidChannelPromise(channel, false);
  }

  Channel channel() {
    return channel;
  }

  ChannelPromise quietWrite() {
    return quietWrite;
  }

  void begin(Attempt attempt) {
    this.attempt = attempt;
  }

  void end() {
    this.attempt = null;
  }

  /** The body's write ended: a failure fails the attempt on this connection. */
  @Override
  public void operationComplete(ChannelFuture write) {
    Attempt a = attempt;
    if (!write.isSuccess() && a != null) {
      a.fail("write to the downstream failed: " + DownstreamClient.describe(write.cause()));
    }
  }

  /**
   * Collects one response from Netty's decoder — its head, then its content up to {@link
   * DownstreamClient#MAX_RESPONSE_BODY} — as {@code HttpObjectAggregator} did, without building a
   * whole message: a response with a failed decoder result ends at once, content past the limit
   * closes the connection and fails the attempt, and the last content (or a failed one) completes
   * it. Content without a head is dropped.
   */
  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    try {
      if (msg instanceof HttpResponse response) {
        head(ctx, response);
      } else if (msg instanceof HttpContent content && response != null) {
        content(ctx, content);
      }
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  private void head(ChannelHandlerContext ctx, HttpResponse head) {
    dropBody();
    if (HttpUtil.getContentLength(head, -1L) > DownstreamClient.MAX_RESPONSE_BODY) {
      response = null;
      tooLarge(ctx);
      return;
    }
    response = head;
    if (!head.decoderResult().isSuccess()) {
      respond(ctx);
    }
  }

  private void content(ChannelHandlerContext ctx, HttpContent content) {
    ByteBuf bytes = content.content();
    if (bytes.isReadable()) {
      if (body == null) {
        body = ctx.alloc().heapBuffer(bytes.readableBytes());
      }
      if (body.readableBytes() + bytes.readableBytes() > DownstreamClient.MAX_RESPONSE_BODY) {
        response = null;
        dropBody();
        tooLarge(ctx);
        return;
      }
      body.writeBytes(bytes);
    }
    if (content instanceof LastHttpContent || !content.decoderResult().isSuccess()) {
      respond(ctx);
    }
  }

  /** A body over the limit: the connection is out of step with the response, so it closes. */
  private void tooLarge(ChannelHandlerContext ctx) {
    ctx.close();
    Attempt a = attempt;
    if (a != null) {
      a.fail(
          "downstream connection failed: response body larger than "
              + DownstreamClient.MAX_RESPONSE_BODY
              + " bytes");
    }
  }

  private void respond(ChannelHandlerContext ctx) {
    HttpResponse r = response;
    response = null;
    Attempt a = attempt;
    try {
      if (a == null) {
        // A response nobody asked for: the connection is out of step, do not reuse it.
        ctx.close();
        return;
      }
      a.complete(outcome(r, body), HttpUtil.isKeepAlive(r));
    } finally {
      dropBody();
    }
  }

  private void dropBody() {
    if (body != null) {
      body.release();
      body = null;
    }
  }

  /**
   * @param body borrowed; {@code null} for none
   */
  private static AttemptOutcome outcome(HttpResponse response, ByteBuf body) {
    int status = response.status().code();
    String retryAfterHeader = response.headers().get(HttpHeaderNames.RETRY_AFTER);
    WrittenCounts written = WrittenCounts.of(response.headers());
    if (body == null && retryAfterHeader == null && written == null) {
      if (status == 204) {
        return OK_204;
      }
      if (status == 200) {
        return OK_200;
      }
    }
    String text = body == null ? "" : body.toString(StandardCharsets.UTF_8).strip();
    if (text.length() > MESSAGE_CHARS) {
      text = text.substring(0, MESSAGE_CHARS) + "...";
    }
    long retryAfter = RetryPolicy.parseRetryAfter(retryAfterHeader, System.currentTimeMillis());
    return new AttemptOutcome(status, text, retryAfter, written);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    dropBody();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    Attempt a = attempt;
    if (a != null) {
      a.fail("connection closed before the downstream answered");
    }
    response = null;
    dropBody();
    super.channelInactive(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    Attempt a = attempt;
    if (a != null) {
      a.fail("downstream connection failed: " + DownstreamClient.describe(cause));
    } else {
      ctx.close();
    }
  }
}
