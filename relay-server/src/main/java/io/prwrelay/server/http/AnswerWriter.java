package io.prwrelay.server.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;

/**
 * Writes the answers of one connection and decides after each whether the connection stays open:
 * only when the request, the answer and the server's state allow (a draining server closes every
 * connection after its next answer). An answer that ends the connection is followed by {@link
 * LingeringClose} in place of the handler, and from then on the connection is {@linkplain #closing
 * closing}: whatever it still reads is discarded. An answer that fills the outbound buffer past its
 * high water mark blocks reading ({@link Pipelining#block}). One per connection, on its event loop;
 * the {@link IngressHandler} calls it in request order. An answer to a {@code HEAD} request goes
 * without its body ({@link #forMethodOf}).
 */
final class AnswerWriter {
  private final ChannelHandler handler;
  private final ServerState state;
  private final Pipelining pipelining;

  /** An answer that closes the connection was written; everything after is discarded. */
  private boolean closing;

  /** The last answer written, for closing once it is out. */
  private ChannelFuture lastWrite;

  /**
   * @param handler the handler whose connection this is, replaced by {@link LingeringClose} after
   *     an answer that ends it
   * @param pipelining blocked when the client does not read its answers
   */
  AnswerWriter(ChannelHandler handler, ServerState state, Pipelining pipelining) {
    this.handler = handler;
    this.state = state;
    this.pipelining = pipelining;
  }

  /** Whether the connection is closing: nothing more is read or answered. */
  boolean closing() {
    return closing;
  }

  /**
   * Writes {@code a} as the answer to {@code req}. The usual answer, 204 with nothing to tell on a
   * connection that stays open, is one shared response ({@link Answer#NO_CONTENT_RESPONSE}): the
   * same bytes as one built for it.
   */
  void answer(ChannelHandlerContext ctx, HttpRequest req, Answer a) {
    if (a.isPlainNoContent()
        && keepAlive(req, false)
        && req.protocolVersion().equals(HttpVersion.HTTP_1_1)) {
      writeKeptOpen(ctx, Answer.NO_CONTENT_RESPONSE);
      return;
    }
    write(ctx, req, a.toResponse(), a.close());
  }

  private boolean keepAlive(HttpRequest req, boolean close) {
    return !close && HttpUtil.isKeepAlive(req) && !state.isDraining();
  }

  /**
   * Writes {@code r}; keeps the connection open only when the request, the answer and the state
   * allow.
   *
   * @param r takes ownership
   * @param close whether the answer ends the connection
   */
  void write(ChannelHandlerContext ctx, HttpRequest req, FullHttpResponse r, boolean close) {
    r = forMethodOf(req, r);
    if (keepAlive(req, close)) {
      if (req.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
        r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
      }
      writeKeptOpen(ctx, r);
    } else {
      closing = true;
      r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(r).addListener(f -> LingeringClose.begin(ctx, handler));
    }
  }

  /**
   * Writes an answer after which the connection stays open. (Not with a void promise: the idle
   * timeout's handler, which sees every write complete, would make a promise for it anyway.)
   */
  private void writeKeptOpen(ChannelHandlerContext ctx, FullHttpResponse r) {
    lastWrite = ctx.writeAndFlush(r);
    if (!ctx.channel().isWritable() && !closing) {
      pipelining.block(ctx);
    }
  }

  /** Closes the connection once its last answer is written (the client closed its side). */
  void closeAfterLastWrite(ChannelHandlerContext ctx) {
    closing = true;
    if (lastWrite == null || lastWrite.isDone()) {
      ctx.close();
    } else {
      lastWrite.addListener(f -> ctx.close());
    }
  }

  /**
   * {@code r} as the answer to {@code req}: to a {@code HEAD} request, its status and headers
   * ({@code Content-Length} included) without its body (RFC 9110 9.3.2).
   *
   * @param r takes ownership
   */
  static FullHttpResponse forMethodOf(HttpRequest req, FullHttpResponse r) {
    if (!HttpMethod.HEAD.equals(req.method()) || !r.content().isReadable()) {
      return r;
    }
    FullHttpResponse headersOnly = r.replace(Unpooled.EMPTY_BUFFER);
    r.release();
    return headersOnly;
  }

  /** Answers {@code Expect: 100-continue}: the sender may send the body now. */
  static void continueIfExpected(ChannelHandlerContext ctx, HttpRequest req) {
    if (HttpUtil.is100ContinueExpected(req)) {
      ctx.writeAndFlush(
          new DefaultFullHttpResponse(
              HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE, Unpooled.EMPTY_BUFFER));
    }
  }
}
