package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The ingress codec ({@link IngressDecoder}, Netty's response encoder) decodes well-formed and
 * hostile heads to the same requests as Netty's {@code HttpServerCodec} with Netty's own header
 * maps, and encodes the relay's answers to them with the same bytes (HEAD, 100-continue), sharing
 * the header names senders send; the bound on header fields holds for trailers too.
 */
class IngressDecoderTest {
  /** What an operation returned, or what it threw. */
  private static String outcome(HttpHeaders h, Function<HttpHeaders, Object> op) {
    try {
      Object r = op.apply(h);
      return r instanceof HttpHeaders ? "this" : String.valueOf(r);
    } catch (Exception e) { // a checked ParseException too, thrown by Netty's date parsing
      return e.getClass().getName() + ": " + e.getMessage() + " <- " + e.getCause();
    }
  }

  private static List<String> state(HttpHeaders h) {
    List<String> s = new ArrayList<>();
    for (Map.Entry<String, String> e : h) {
      s.add(e.getKey() + ": " + e.getValue());
    }
    Iterator<Map.Entry<CharSequence, CharSequence>> chars = h.iteratorCharSequence();
    while (chars.hasNext()) {
      Map.Entry<CharSequence, CharSequence> e = chars.next();
      s.add("cs " + e.getKey() + ": " + e.getValue());
    }
    s.add("size " + h.size() + " empty " + h.isEmpty() + " names " + h.names());
    s.add("entries " + h.entries());
    return s;
  }

  /** Heads a sender or an attacker may send, each followed by a few body bytes. */
  private static final List<String> HEADS =
      List.of(
          "POST /api/v1/write HTTP/1.1\r\nHost: relay\r\nContent-Encoding: snappy\r\n"
              + "Content-Type: application/x-protobuf\r\nUser-Agent: Prometheus/2.53\r\n"
              + "X-Prometheus-Remote-Write-Version: 0.1.0\r\nContent-Length: 4\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nContent-Length: 4\r\ncontent-length: 4\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nContent-Length: 4, 4\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nContent-Length:  04 \r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nContent-Length: -1\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
              + "4\r\nabcd\r\n0\r\n\r\n",
          "POST /api/v1/write HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
              + "4\r\nabcd\r\n0\r\nX-Trailer: yes\r\n\r\n",
          "POST /api/v1/write HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
              + "4\r\nabcd\r\n0\r\nContent-Length: 9\r\nHost: x\r\n\r\n",
          "POST /api/v1/write HTTP/1.1\r\nBad Name: x\r\nContent-Length: 4\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nName: a\u0001b\r\nContent-Length: 4\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\n: empty\r\nContent-Length: 4\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nFolded: a\r\n b\r\nContent-Length: 4\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 4\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nConnection: Close\r\nContent-Length: 4\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\nabcd",
          "GET /-/healthy HTTP/1.1\r\nHost: relay\r\nAccept: */*\r\n\r\n",
          "HEAD /metrics HTTP/1.1\r\nhost: relay\r\n\r\n",
          "POST /push HTTP/1.1\r\nX-Scope-OrgID: team-a\r\nx-scope-orgid: team-b\r\n"
              + "Authorization: Bearer t\r\nContent-Length: 0\r\n\r\n",
          "POST /api/v1/write HTTP/1.1\r\nNoColon\r\nContent-Length: 4\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nLatin: caf\u00e9\r\nContent-Length: 4\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nhost: r\r\ncontent-encoding: snappy\r\n"
              + "content-type: application/x-protobuf\r\nuser-agent: u\r\n"
              + "x-prometheus-remote-write-version: 0.1.0\r\ncontent-length: 4\r\n\r\nabcd",
          "POST /api/v1/write HTTP/1.1\r\nCONTENT-ENCODING: snappy\r\nContent-Lengths: 1\r\n"
              + "X-Scope-Orgid: a\r\nAuthorization: Basic eDp5\r\nAccept-Encoding: gzip\r\n"
              + "Content-Length: 4\r\n\r\nabcd",
          "HEAD /-/healthy HTTP/1.1\r\n\r\nGET /-/healthy HTTP/1.1\r\n\r\n"
              + "HEAD /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nz",
          "CONNECT relay:443 HTTP/1.1\r\nHost: relay:443\r\n\r\n",
          "POST /a HTTP/1.1\r\nContent-Length: 1\r\n\r\nx".repeat(40));

  /**
   * What the codec decoded from {@code raw}, every message as text; then the bytes it encodes for a
   * 100 Continue where one was expected and, for every request in order, a 200 with a body as the
   * {@link AnswerWriter} gives it (to a {@code HEAD}, its headers only), and whether the connection
   * stayed open.
   */
  private static List<String> exchange(ChannelHandler codec, String raw) {
    EmbeddedChannel ch = new EmbeddedChannel(codec);
    List<String> out = new ArrayList<>();
    List<HttpRequest> requests = new ArrayList<>();
    try {
      ch.writeInbound(Unpooled.copiedBuffer(raw, StandardCharsets.ISO_8859_1));
      Object msg;
      while ((msg = ch.readInbound()) != null) {
        try {
          out.add(describe(msg));
          if (msg instanceof HttpRequest req) {
            requests.add(req);
          }
        } finally {
          ReferenceCountUtil.release(msg);
        }
      }
      for (HttpRequest req : requests) {
        if (HttpUtil.is100ContinueExpected(req)) {
          ch.writeOutbound(
              new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
        }
        // The relay answers CONNECT 405 (AdminHandler), never 2xx.
        HttpResponseStatus status =
            req.method().equals(HttpMethod.CONNECT)
                ? HttpResponseStatus.METHOD_NOT_ALLOWED
                : HttpResponseStatus.OK;
        FullHttpResponse r =
            new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1,
                status,
                Unpooled.copiedBuffer("ok\n", StandardCharsets.US_ASCII));
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 3);
        r.headers().set(HttpHeaderNames.TRANSFER_ENCODING, "identity");
        ch.writeOutbound(AnswerWriter.forMethodOf(req, r));
        out.add("open after answer: " + ch.isOpen());
      }
      ByteBuf bytes;
      StringBuilder written = new StringBuilder();
      while ((bytes = ch.readOutbound()) != null) {
        written.append(bytes.toString(StandardCharsets.ISO_8859_1));
        bytes.release();
      }
      out.add(written.toString());
    } finally {
      ch.finishAndReleaseAll();
    }
    return out;
  }

  private static String describe(Object msg) {
    StringBuilder sb = new StringBuilder(msg.getClass().getSimpleName());
    if (msg instanceof HttpRequest req) {
      sb.append(' ').append(req.method()).append(' ').append(req.uri());
      sb.append(' ').append(req.protocolVersion()).append(' ').append(req.decoderResult());
      HttpHeaders h = req.headers();
      sb.append(" keepAlive=").append(outcome(h, x -> HttpUtil.isKeepAlive(req)));
      sb.append(" length=").append(outcome(h, x -> HttpUtil.getContentLength(req, -2L)));
      sb.append(" chunked=").append(outcome(h, x -> HttpUtil.isTransferEncodingChunked(req)));
      sb.append(" expect=").append(outcome(h, x -> HttpUtil.is100ContinueExpected(req)));
      sb.append(' ').append(state(h));
    }
    if (msg instanceof HttpContent c) {
      ByteBuf content = c.content();
      sb.append(" content=").append(content.toString(StandardCharsets.ISO_8859_1));
      sb.append(' ').append(c.decoderResult());
    }
    if (msg instanceof LastHttpContent last) {
      sb.append(" trailers=").append(state(last.trailingHeaders()));
    }
    return sb.toString();
  }

  @Test
  void theIngressCodecDecodesAndAnswersEveryHeadAsNettysCodecWithItsMaps() {
    for (String raw : HEADS) {
      HttpServerCodec before =
          new HttpServerCodec(
              new HttpDecoderConfig()
                  .setMaxInitialLineLength(4096)
                  .setMaxHeaderSize(16 * 1024)
                  .setMaxChunkSize(64 * 1024)
                  .setHeadersFactory(DefaultHttpHeadersFactory.headersFactory())
                  .setTrailersFactory(DefaultHttpHeadersFactory.trailersFactory()),
              Integer.MAX_VALUE);
      assertEquals(exchange(before, raw), exchange(HttpIngress.codec(), raw), raw);
    }
  }

  @Test
  void theHeaderNamesSendersSendAreOneCopyForEveryRequestAndOthersAreTheirOwn() {
    EmbeddedChannel ch = new EmbeddedChannel(HttpIngress.codec());
    String head =
        "POST /api/v1/write HTTP/1.1\r\nUser-Agent: Prometheus\r\nx-other: 1\r\n"
            + "content-encoding: snappy\r\nContent-Length: 0\r\n\r\n";
    ch.writeInbound(Unpooled.copiedBuffer(head + head, StandardCharsets.ISO_8859_1));
    List<List<CharSequence>> names = new ArrayList<>();
    Object msg;
    while ((msg = ch.readInbound()) != null) {
      if (msg instanceof HttpRequest req) {
        List<CharSequence> n = new ArrayList<>();
        req.headers().iteratorCharSequence().forEachRemaining(e -> n.add(e.getKey()));
        names.add(n);
      }
      ReferenceCountUtil.release(msg);
    }
    assertFalse(ch.finish());
    assertEquals(2, names.size());
    List<CharSequence> first = names.get(0);
    List<CharSequence> second = names.get(1);
    assertEquals(
        List.of("User-Agent", "x-other", "content-encoding", "Content-Length"),
        first.stream().map(CharSequence::toString).toList());
    assertSame(first.get(0), second.get(0));
    assertNotSame(first.get(1), second.get(1));
    assertSame(first.get(2), second.get(2));
    assertSame(first.get(3), second.get(3));
  }

  @Test
  void aRequestWithMoreTrailerFieldsThanTheBoundFailsToDecode() {
    EmbeddedChannel ch = new EmbeddedChannel(HttpIngress.codec());
    StringBuilder raw =
        new StringBuilder("POST /api/v1/write HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    raw.append("4\r\nabcd\r\n0\r\n");
    for (int i = 0; i <= HttpIngress.MAX_HEADER_FIELDS; i++) {
      raw.append("X-T").append(i).append(": v\r\n");
    }
    raw.append("\r\n");
    ch.writeInbound(Unpooled.copiedBuffer(raw, StandardCharsets.ISO_8859_1));
    List<Object> read = new ArrayList<>();
    Object msg;
    while ((msg = ch.readInbound()) != null) {
      read.add(msg);
    }
    try {
      HttpContent last = (HttpContent) read.get(read.size() - 1);
      assertTrue(last.decoderResult().isFailure());
      assertEquals(
          "more than " + HttpIngress.MAX_HEADER_FIELDS + " header fields",
          last.decoderResult().cause().getMessage());
      assertInstanceOf(TooLongHttpHeaderException.class, last.decoderResult().cause());
    } finally {
      read.forEach(ReferenceCountUtil::release);
    }
    assertFalse(ch.finishAndReleaseAll());
  }
}
