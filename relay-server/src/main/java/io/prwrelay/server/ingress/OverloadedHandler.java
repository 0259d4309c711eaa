package io.prwrelay.server.ingress;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.prwrelay.server.config.ServerConfig;
import io.prwrelay.server.write.Answer;

/**
 * Serves a connection accepted beyond {@code relay.server.max-connections}: answers its first
 * request 503 with {@code Retry-After} (a sender retries that with backoff, as it does a refused
 * connection, but its log says why), then closes it gracefully with {@link LingeringClose}. Reads
 * nothing else; an idle connection is closed.
 */
final class OverloadedHandler extends ChannelInboundHandlerAdapter {
  /** Seconds a sender is asked to wait. */
  static final long RETRY_AFTER_SECONDS = 5;

  private final int maxConnections;
  private boolean answered;

  OverloadedHandler(int maxConnections) {
    this.maxConnections = maxConnections;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    try {
      if (msg instanceof HttpRequest && !answered) {
        answered = true;
        FullHttpResponse r =
            AnswerWriter.toResponse(
                new Answer(
                    503,
                    "too many connections ("
                        + ServerConfig.MAX_CONNECTIONS.name()
                        + "="
                        + maxConnections
                        + "); retry later",
                    RETRY_AFTER_SECONDS,
                    true));
        r = AnswerWriter.forMethodOf((HttpRequest) msg, r);
        r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(r).addListener(f -> LingeringClose.begin(ctx, this));
      }
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent) {
      ctx.close();
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
