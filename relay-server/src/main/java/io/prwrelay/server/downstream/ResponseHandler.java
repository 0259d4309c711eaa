package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.VoidChannelPromise;
import io.netty.util.ReferenceCountUtil;
import io.prwrelay.server.protocol.WrittenCounts;
import java.nio.charset.StandardCharsets;

/**
 * The handler of a pooled downstream connection, and the connection as {@link LoopConnections}
 * keeps it: reads the response of the current attempt from the connection's bytes with a {@link
 * ResponseParser} and hands it back, and fails the attempt when the connection breaks, its response
 * is malformed, or its request cannot be written.
 */
final class ResponseHandler extends ChannelInboundHandlerAdapter {
  /** Characters of a downstream body kept for messages. */
  private static final int MESSAGE_CHARS = 512;

  /** Outcomes of empty 2xx answers without written counts, the usual ones, made once. */
  private static final AttemptOutcome OK_200 = new AttemptOutcome(200, "", -1);

  private static final AttemptOutcome OK_204 = new AttemptOutcome(204, "", -1);

  private final ResponseParser parser = new ResponseParser(DownstreamClient.MAX_RESPONSE_BODY);

  private Channel channel;

  /** For the request head: a failed write shows on the body's write that follows it. */
  private ChannelPromise quietWrite;

  /** For the body: a failed write fails the attempt through {@link #exceptionCaught}. */
  private ChannelPromise failingWrite;

  private Attempt attempt;

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    channel = ctx.channel();
    quietWrite = new VoidChannelPromise(channel, false);
    failingWrite = new VoidChannelPromise(channel, true);
  }

  Channel channel() {
    return channel;
  }

  ChannelPromise quietWrite() {
    return quietWrite;
  }

  ChannelPromise failingWrite() {
    return failingWrite;
  }

  void begin(Attempt attempt) {
    this.attempt = attempt;
  }

  void end() {
    this.attempt = null;
  }

  /**
   * Reads the current attempt's response. A complete one completes the attempt; bytes with no
   * attempt to answer, or after the response in the same read, mean the connection is out of step:
   * it closes. A malformed response (or a body over {@link DownstreamClient#MAX_RESPONSE_BODY})
   * closes the connection and fails the attempt as a transport failure.
   */
  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof ByteBuf in)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    try {
      if (!in.isReadable()) {
        return;
      }
      if (attempt == null) {
        // A response nobody asked for.
        ctx.close();
        return;
      }
      if (parser.read(in, ctx.alloc())) {
        respond(ctx, in.isReadable());
      }
    } catch (ResponseParser.Malformed e) {
      ctx.close();
      Attempt a = attempt;
      if (a != null) {
        a.fail("downstream connection failed: " + e.getMessage());
      }
    } finally {
      in.release();
    }
  }

  /** The response is complete: the attempt gets its outcome; {@code extra} bytes followed it. */
  private void respond(ChannelHandlerContext ctx, boolean extra) {
    Attempt a = attempt;
    try {
      boolean keepAlive = parser.keepAlive() && !extra;
      AttemptOutcome outcome = outcome(parser);
      if (extra) {
        ctx.close();
      }
      a.complete(outcome, keepAlive);
    } finally {
      parser.reset();
    }
  }

  private static AttemptOutcome outcome(ResponseParser response) {
    int status = response.status();
    ByteBuf body = response.body();
    String retryAfterHeader = response.retryAfter();
    WrittenCounts written = response.written();
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
    parser.release();
  }

  /**
   * The connection closed: a response whose head was read ends here (its body runs to the close, or
   * was cut short: the status stands); without one, the attempt fails.
   */
  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    Attempt a = attempt;
    if (a != null) {
      if (parser.closed()) {
        respond(ctx, false);
      } else {
        a.fail("connection closed before the downstream answered");
      }
    }
    parser.release();
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
