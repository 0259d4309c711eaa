package io.prwrelay.server.ingress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.prwrelay.server.write.Answer;
import java.nio.charset.StandardCharsets;

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
   * connection that stays open, is one shared response ({@link #NO_CONTENT_RESPONSE}): the same
   * bytes as one built for it.
   */
  void answer(ChannelHandlerContext ctx, HttpRequest req, Answer a) {
    if (isPlainNoContent(a)
        && keepAlive(req, false)
        && req.protocolVersion().equals(HttpVersion.HTTP_1_1)) {
      writeKeptOpen(ctx, NO_CONTENT_RESPONSE);
      return;
    }
    write(ctx, req, toResponse(a), a.close());
  }

  /**
   * The response to {@linkplain #isPlainNoContent a plain 204} on a connection that stays open,
   * shared by every connection: status line alone, no header (as {@link #toResponse} builds it),
   * nothing in it ever changed. The encoder's removal of framing headers from a 204 finds none.
   */
  static final FullHttpResponse NO_CONTENT_RESPONSE =
      new DefaultFullHttpResponse(
          HttpVersion.HTTP_1_1,
          HttpResponseStatus.NO_CONTENT,
          Unpooled.EMPTY_BUFFER,
          NoHeaders.INSTANCE,
          EmptyHttpHeaders.INSTANCE);

  /** A 204 with no {@code Retry-After} and no {@code *-Written} counts: no header at all. */
  static boolean isPlainNoContent(Answer a) {
    return a.status() == 204 && a.retryAfterSeconds() < 0 && a.written() == null && !a.close();
  }

  /**
   * Headers that are empty for good: reads find nothing, removals have nothing to remove, and
   * anything that would add one fails.
   */
  private static final class NoHeaders extends EmptyHttpHeaders {
    static final NoHeaders INSTANCE = new NoHeaders();

    @Override
    public HttpHeaders remove(String name) {
      return this;
    }

    @Override
    public HttpHeaders remove(CharSequence name) {
      return this;
    }
  }

  /**
   * The response of {@code a}: its message and a newline as {@code text/plain} (none for 204 or an
   * empty message), {@code Content-Length}, {@code Retry-After} and the {@code *-Written} headers
   * when set. Connection headers are the caller's.
   *
   * @return a new response; the caller owns it
   */
  static FullHttpResponse toResponse(Answer a) {
    ByteBuf content =
        a.status() == 204 || a.message().isEmpty()
            ? Unpooled.EMPTY_BUFFER
            : Unpooled.copiedBuffer(a.message() + "\n", StandardCharsets.UTF_8);
    FullHttpResponse r =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1,
            HttpResponseStatus.valueOf(a.status()),
            content,
            new SmallHeaders(SmallHeaders.HEADERS, 8),
            EmptyHttpHeaders.INSTANCE);
    if (content.isReadable()) {
      r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
    }
    if (a.status() != 204) {
      r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
    }
    if (a.retryAfterSeconds() >= 0) {
      r.headers().set(HttpHeaderNames.RETRY_AFTER, Long.toString(a.retryAfterSeconds()));
    }
    if (a.written() != null) {
      a.written().setOn(r.headers());
    }
    return r;
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
