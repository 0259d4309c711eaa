package io.prwrelay.server.ingress;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Closes a connection gracefully after an answer that ends it: half-closes it (the client sees the
 * end of the answer), then reads and discards whatever the client still sends until it closes, goes
 * quiet for {@link #QUIET_NANOS}, or {@link #MAX_NANOS} or {@link #MAX_BYTES} are reached, then
 * closes. Closing at once with unread bytes in the socket would send a reset, which can destroy the
 * answer before the client reads it — and a sender retries a reset, re-sending the same request.
 */
final class LingeringClose extends ChannelInboundHandlerAdapter {
  /** At most this long after the answer. */
  static final long MAX_NANOS = TimeUnit.SECONDS.toNanos(10);

  /** At most this many discarded bytes. */
  static final long MAX_BYTES = 64L << 20;

  /** Closes as soon as the client has sent nothing for this long. */
  static final long QUIET_NANOS = TimeUnit.SECONDS.toNanos(2);

  private long start;
  private long lastRead;
  private long discarded;
  private ScheduledFuture<?> timer;

  private LingeringClose() {}

  /**
   * Ends the connection of {@code handler}, which is done with it: in its place, lingers and
   * closes; closes at once where the transport cannot half-close.
   */
  static void begin(ChannelHandlerContext ctx, ChannelHandler handler) {
    if (!ctx.channel().isActive()) {
      return;
    }
    if (!(ctx.channel() instanceof DuplexChannel)) {
      ctx.close();
      return;
    }
    ctx.pipeline().replace(handler, "lingering-close", new LingeringClose());
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    start = now(ctx);
    lastRead = start;
    ((DuplexChannel) ctx.channel())
        .shutdownOutput()
        .addListener(
            f -> {
              if (!f.isSuccess()) {
                ctx.close();
                return;
              }
              ctx.channel().config().setAutoRead(true);
              ctx.read();
              check(ctx);
            });
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof HttpContent c) {
      discarded += c.content().readableBytes();
      lastRead = now(ctx);
      if (discarded > MAX_BYTES) {
        ctx.close();
      }
    }
    ReferenceCountUtil.release(msg);
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof ChannelInputShutdownEvent) {
      ctx.close(); // the client closed its side: nothing more will come
      return;
    }
    ctx.fireUserEventTriggered(evt);
  }

  private void check(ChannelHandlerContext ctx) {
    if (!ctx.channel().isActive()) {
      return;
    }
    long now = now(ctx);
    if (now - start >= MAX_NANOS || now - lastRead >= QUIET_NANOS) {
      ctx.close();
      return;
    }
    long next = Math.min(start + MAX_NANOS, lastRead + QUIET_NANOS) - now;
    timer = ctx.executor().schedule(() -> check(ctx), next, TimeUnit.NANOSECONDS);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    if (timer != null) {
      timer.cancel(false);
    }
    super.channelInactive(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }

  private static long now(ChannelHandlerContext ctx) {
    return ctx.executor().ticker().nanoTime();
  }
}
