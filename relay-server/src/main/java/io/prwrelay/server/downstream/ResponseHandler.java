package io.prwrelay.server.downstream;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.VoidChannelPromise;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpUtil;
import java.nio.charset.StandardCharsets;

/**
 * Last handler of a pooled downstream connection, and the connection as {@link LoopConnections}
 * keeps it: hands the response of the current attempt back, and fails the attempt when the
 * connection breaks or its request cannot be written.
 */
final class ResponseHandler extends SimpleChannelInboundHandler<FullHttpResponse>
    implements ChannelFutureListener {
  /** Characters of a downstream body kept for messages. */
  private static final int MESSAGE_CHARS = 512;

  /** Outcomes of empty 2xx answers without written counts, the usual ones, made once. */
  private static final AttemptOutcome OK_200 = new AttemptOutcome(200, "", -1);

  private static final AttemptOutcome OK_204 = new AttemptOutcome(204, "", -1);

  private final String hostHeader;
  private Channel channel;

  /** For the request head: a failed write shows on the body's write that follows it. */
  private ChannelPromise quietWrite;

  private Attempt attempt;

  /**
   * @param hostHeader the downstream, as named in messages
   */
  ResponseHandler(String hostHeader) {
    this.hostHeader = hostHeader;
  }

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
      a.fail("write to " + hostHeader + " failed: " + DownstreamClient.describe(write.cause()));
    }
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
    Attempt a = attempt;
    if (a == null) {
      // A response nobody asked for: the connection is out of step, do not reuse it.
      ctx.close();
      return;
    }
    a.complete(outcome(response), HttpUtil.isKeepAlive(response));
  }

  private static AttemptOutcome outcome(FullHttpResponse response) {
    int status = response.status().code();
    String retryAfterHeader = response.headers().get(HttpHeaderNames.RETRY_AFTER);
    WrittenCounts written = WrittenCounts.of(response.headers());
    if (!response.content().isReadable() && retryAfterHeader == null && written == null) {
      if (status == 204) {
        return OK_204;
      }
      if (status == 200) {
        return OK_200;
      }
    }
    String body = response.content().toString(StandardCharsets.UTF_8).strip();
    if (body.length() > MESSAGE_CHARS) {
      body = body.substring(0, MESSAGE_CHARS) + "...";
    }
    long retryAfter = RetryPolicy.parseRetryAfter(retryAfterHeader, System.currentTimeMillis());
    return new AttemptOutcome(status, body, retryAfter, written);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    Attempt a = attempt;
    if (a != null) {
      a.fail("connection closed before the downstream answered");
    }
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
