package io.prwrelay.server.ingress;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.ScheduledFuture;
import io.prwrelay.server.config.ServerConfig;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.write.Answer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Bounds the time a request's head may take to arrive: a client that sends part of a request line
 * or headers and then trickles the rest (slowloris) gets 408 and the connection ends once {@code
 * relay.server.read-timeout} has passed since the read that left the head incomplete. The idle
 * timeout cannot catch it, since every trickled byte resets it; the body has its own timeout in
 * {@link IngressHandler}.
 *
 * <p>A connection's first head is timed from the connection's start: a client that connects and
 * sends nothing at all within the timeout is closed without an answer (there is no request to
 * answer), counted in {@code relay_connections_rejected_total{action="silent"}}, so that silent
 * connections cannot hold the slots of {@code relay.server.max-connections} until the idle timeout.
 * One that sent part of a head by then gets the 408.
 *
 * <p>Sits between the HTTP codec and the handlers that answer: a read after which no request is
 * open (every head seen was answered) and no new head was decoded left bytes of an unfinished head
 * in the codec, and starts the clock; a decoded head stops it. The clock is only armed between
 * requests, so a request being received or processed is never timed out here. Time comes from the
 * event loop's ticker.
 */
final class RequestHeadTimeout extends ChannelDuplexHandler {
  private final long timeoutNanos;
  private final Duration timeout;
  private final RelayMetrics metrics;

  /** Heads decoded whose final answer has not been written. */
  private int open;

  private boolean headInThisRead;
  private ScheduledFuture<?> timer;

  /**
   * Something arrived on the connection: set at the end of every read, even one that decoded
   * nothing (a read always ends before the timer's task can run).
   */
  private boolean spoke;

  /**
   * An answer that ends the connection was written: no request is read after it, so whatever the
   * client still sends (discarded while the connection lingers) never starts the clock.
   */
  private boolean closing;

  RequestHeadTimeout(Duration timeout, RelayMetrics metrics) {
    this.timeout = timeout;
    this.timeoutNanos = timeout.toNanos();
    this.metrics = metrics;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    if (ctx.channel().isActive()) {
      armFirst(ctx);
    }
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    armFirst(ctx);
    super.channelActive(ctx);
  }

  /** The first head is timed from the connection's start. */
  private void armFirst(ChannelHandlerContext ctx) {
    if (timer == null && !spoke) {
      timer = ctx.executor().schedule(() -> timedOut(ctx), timeoutNanos, TimeUnit.NANOSECONDS);
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof HttpRequest) {
      open++;
      headInThisRead = true;
      cancel();
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    spoke = true;
    if (open == 0 && !headInThisRead && timer == null && !closing) {
      timer = ctx.executor().schedule(() -> timedOut(ctx), timeoutNanos, TimeUnit.NANOSECONDS);
    }
    headInThisRead = false;
    ctx.fireChannelReadComplete();
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    if (msg instanceof HttpResponse r && !HttpUtil.isKeepAlive(r)) {
      closing = true;
      cancel();
    }
    if (msg instanceof LastHttpContent
        && !(msg instanceof HttpResponse r
            && r.status().codeClass() == HttpStatusClass.INFORMATIONAL)
        && open > 0) {
      open--;
    }
    ctx.write(msg, promise);
  }

  private void timedOut(ChannelHandlerContext ctx) {
    timer = null;
    if (open > 0 || closing || !ctx.channel().isActive()) {
      return;
    }
    if (!spoke) {
      metrics.connectionRejected("silent");
      ctx.close();
      return;
    }
    metrics.otherRequest("other", 408);
    Answer a =
        Answer.closing(
            408,
            "request head not received within " + ServerConfig.READ_TIMEOUT.name() + "=" + timeout);
    HttpResponse r = AnswerWriter.toResponse(a);
    r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    open++;
    ctx.writeAndFlush(r).addListener(f -> LingeringClose.begin(ctx, this));
  }

  private void cancel() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    cancel();
    super.channelInactive(ctx);
  }
}
