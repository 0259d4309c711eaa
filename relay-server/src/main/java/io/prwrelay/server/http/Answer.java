package io.prwrelay.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.prwrelay.server.downstream.Protocol;
import io.prwrelay.server.downstream.WrittenCounts;
import java.nio.charset.StandardCharsets;

/**
 * An HTTP answer to a sender: status, plain-text message, {@code Retry-After} seconds (-1 for
 * none), whether the connection must be closed after it, and for a Remote Write 2.0 sender what was
 * written ({@code X-Prometheus-Remote-Write-*-Written}; {@code null} for a 1.0 sender).
 */
record Answer(
    int status, String message, long retryAfterSeconds, boolean close, WrittenCounts written) {
  Answer(int status, String message, long retryAfterSeconds, boolean close) {
    this(status, message, retryAfterSeconds, close, null);
  }

  /** This answer with the {@code *-Written} headers of {@code counts}. */
  Answer withWritten(WrittenCounts counts) {
    return new Answer(status, message, retryAfterSeconds, close, counts);
  }

  /**
   * This answer as a sender of {@code protocol} gets it: a PRW 2.0 sender learns from every answer
   * what was written, so one that says nothing says zero.
   */
  Answer forSenderOf(Protocol protocol) {
    return protocol == Protocol.V2 && written == null ? withWritten(WrittenCounts.ZERO) : this;
  }

  /**
   * The response to {@link #isPlainNoContent a plain 204} on a connection that stays open, shared
   * by every connection: status line alone, no header (as {@link #toResponse} builds it), nothing
   * in it ever changed. The encoder's removal of framing headers from a 204 finds none.
   */
  static final FullHttpResponse NO_CONTENT_RESPONSE =
      new DefaultFullHttpResponse(
          HttpVersion.HTTP_1_1,
          HttpResponseStatus.NO_CONTENT,
          Unpooled.EMPTY_BUFFER,
          NoHeaders.INSTANCE,
          EmptyHttpHeaders.INSTANCE);

  /** A 204 with no {@code Retry-After} and no {@code *-Written} counts: no header at all. */
  boolean isPlainNoContent() {
    return status == 204 && retryAfterSeconds < 0 && written == null && !close;
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

  static Answer of(int status, String message) {
    return new Answer(status, message, -1, false);
  }

  static Answer closing(int status, String message) {
    return new Answer(status, message, -1, true);
  }

  /**
   * The response: the message and a newline as {@code text/plain} (none for 204 or an empty
   * message), {@code Content-Length}, {@code Retry-After} and the {@code *-Written} headers when
   * set. Connection headers are the caller's.
   */
  FullHttpResponse toResponse() {
    ByteBuf content =
        status == 204 || message.isEmpty()
            ? Unpooled.EMPTY_BUFFER
            : Unpooled.copiedBuffer(message + "\n", StandardCharsets.UTF_8);
    FullHttpResponse r =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1,
            HttpResponseStatus.valueOf(status),
            content,
            new SmallHeaders(SmallHeaders.HEADERS, 8),
            EmptyHttpHeaders.INSTANCE);
    if (content.isReadable()) {
      r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
    }
    if (status != 204) {
      r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
    }
    if (retryAfterSeconds >= 0) {
      r.headers().set(HttpHeaderNames.RETRY_AFTER, Long.toString(retryAfterSeconds));
    }
    if (written != null) {
      written.setOn(r.headers());
    }
    return r;
  }
}
