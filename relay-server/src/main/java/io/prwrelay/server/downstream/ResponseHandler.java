package io.prwrelay.server.downstream;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpUtil;
import java.nio.charset.StandardCharsets;

/**
 * Last handler of a pooled downstream connection: hands the response of the current attempt back.
 */
final class ResponseHandler extends SimpleChannelInboundHandler<FullHttpResponse> {
  /** Characters of a downstream body kept for messages. */
  private static final int MESSAGE_CHARS = 512;

  private DownstreamClient.Attempt attempt;

  void begin(DownstreamClient.Attempt attempt) {
    this.attempt = attempt;
  }

  void end() {
    this.attempt = null;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
    DownstreamClient.Attempt a = attempt;
    if (a == null) {
      // A response nobody asked for: the connection is out of step, do not reuse it.
      ctx.close();
      return;
    }
    int status = response.status().code();
    String body = response.content().toString(StandardCharsets.UTF_8).strip();
    if (body.length() > MESSAGE_CHARS) {
      body = body.substring(0, MESSAGE_CHARS) + "...";
    }
    long retryAfter =
        RetryPolicy.parseRetryAfter(
            response.headers().get(HttpHeaderNames.RETRY_AFTER), System.currentTimeMillis());
    a.complete(
        new AttemptOutcome(status, body, retryAfter, WrittenCounts.of(response.headers())),
        HttpUtil.isKeepAlive(response));
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    DownstreamClient.Attempt a = attempt;
    if (a != null) {
      a.fail("connection closed before the downstream answered");
    }
    super.channelInactive(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    DownstreamClient.Attempt a = attempt;
    if (a != null) {
      a.fail("downstream connection failed: " + DownstreamClient.describe(cause));
    } else {
      ctx.close();
    }
  }
}
