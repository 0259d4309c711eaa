package io.prwrelay.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * {@link CompactHeaders}, the request head's header map, behaves as Netty's map with the same
 * validators: the same answers, the same state and the same refusals (exception and message) for
 * every operation of random sequences, and the ingress codec decodes well-formed and hostile heads
 * to the same requests with either map.
 */
class CompactHeadersTest {
  private static final String[] NAMES = {
    "Content-Length",
    "content-length",
    "CONTENT-ENCODING",
    "Content-Encoding",
    "Transfer-Encoding",
    "Connection",
    "X-Scope-OrgID",
    "x-scope-orgid",
    "Expect",
    "Bad Name",
    "Bad:Name",
    "",
    "Ünicode",
  };

  private static final Object[] VALUES = {
    "snappy",
    "SNAPPY",
    " 12 ",
    "12",
    "70000",
    "chunked",
    "gzip, chunked",
    "close",
    "keep-alive",
    "",
    "bad\r\nvalue",
    "bad\u0000value",
    "tab\tinside",
    "Àccent",
    "Thu, 01 Jan 1970 00:00:01 GMT",
    7,
    new AsciiString("ascii"),
  };

  private static HttpHeaders netty() {
    return new SmallHeaders(SmallHeaders.HEADERS, 8);
  }

  private static HttpHeaders compact() {
    return new CompactHeaders(SmallHeaders.HEADERS, 2);
  }

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

  private static Function<HttpHeaders, Object> randomOp(Random r) {
    String name = NAMES[r.nextInt(NAMES.length)];
    Object value = VALUES[r.nextInt(VALUES.length)];
    CharSequence asciiName = r.nextBoolean() ? name : new AsciiString(name);
    String other = String.valueOf(VALUES[r.nextInt(VALUES.length)]);
    boolean ignoreCase = r.nextBoolean();
    int number = r.nextInt(100);
    boolean clear = r.nextInt(8) == 0;
    return switch (r.nextInt(22)) {
      case 0, 1, 2, 3 -> h -> h.add(asciiName, value);
      case 4 -> h -> h.add(name, value);
      case 5, 6 -> h -> h.set(asciiName, value);
      case 7 -> h -> h.set(name, List.of(value, other));
      case 8 -> h -> h.add(asciiName, List.of(value, other));
      case 9 -> h -> h.remove(asciiName);
      case 10 -> h -> h.get(asciiName);
      case 11 -> h -> h.getAll(asciiName);
      case 12 -> h -> h.contains(asciiName);
      case 13 -> h -> h.contains(name, other, ignoreCase);
      case 14 -> h -> h.contains(asciiName, other, ignoreCase);
      case 15 -> h -> h.containsValue(asciiName, other, ignoreCase);
      case 16 -> h -> h.getInt(asciiName) + " " + h.getShort(asciiName, (short) -1);
      case 17 -> h -> h.getTimeMillis(asciiName, -1L);
      case 18 -> h -> h.setInt(asciiName, number);
      case 19 -> h -> h.addInt(asciiName, 42);
      case 20 -> h -> h.getAll(name) + " " + h.get(name, "none");
      default -> h -> clear ? h.clear() : h.size();
    };
  }

  @Test
  void everyOperationAnswersAndRefusesAsNettysMapDoes() {
    Random random = new Random(25);
    for (int sequence = 0; sequence < 3000; sequence++) {
      HttpHeaders expected = netty();
      HttpHeaders actual = compact();
      List<String> ops = new ArrayList<>();
      for (int i = 0; i < 24; i++) {
        long seed = random.nextLong();
        Function<HttpHeaders, Object> op = randomOp(new Random(seed));
        ops.add(Long.toString(seed));
        assertEquals(outcome(expected, op), outcome(actual, op), () -> "op seeds " + ops);
        assertEquals(state(expected), state(actual), () -> "op seeds " + ops);
      }
    }
  }

  @Test
  void aMapGrowsPastItsSizeHintInOrder() {
    HttpHeaders h = compact();
    for (int i = 0; i < 100; i++) {
      h.add("X-" + i, Integer.toString(i));
    }
    h.add("x-7", "again");
    assertEquals(101, h.size());
    assertEquals("7", h.get("X-7"));
    assertEquals(List.of("7", "again"), h.getAll("X-7"));
    h.remove("X-7");
    assertEquals(99, h.size());
    assertEquals("8", h.get("x-8"));
    assertFalse(h.contains("X-7"));
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
          "POST /api/v1/write HTTP/1.1\r\nLatin: caf\u00e9\r\nContent-Length: 4\r\n\r\nabcd");

  /** What the codec decoded from {@code raw}, every message as text. */
  private static List<String> decode(HttpServerCodec codec, String raw) {
    EmbeddedChannel ch = new EmbeddedChannel(codec);
    List<String> out = new ArrayList<>();
    try {
      ch.writeInbound(Unpooled.copiedBuffer(raw, StandardCharsets.ISO_8859_1));
      Object msg;
      while ((msg = ch.readInbound()) != null) {
        try {
          out.add(describe(msg));
        } finally {
          ReferenceCountUtil.release(msg);
        }
      }
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
  void theIngressCodecDecodesEveryHeadAsWithNettysMaps() {
    for (String raw : HEADS) {
      HttpServerCodec before =
          new HttpServerCodec(
              new HttpDecoderConfig()
                  .setMaxInitialLineLength(4096)
                  .setMaxHeaderSize(16 * 1024)
                  .setMaxChunkSize(64 * 1024)
                  .setHeadersFactory(SmallHeaders.factory(SmallHeaders.HEADERS, 8))
                  .setTrailersFactory(SmallHeaders.factory(SmallHeaders.TRAILERS_VALIDATION, 2)),
              Integer.MAX_VALUE);
      assertEquals(decode(before, raw), decode(HttpIngress.codec(), raw), raw);
    }
  }

  @Test
  void theIngressCodecGivesARequestThatSentNoTrailersAMapWithNoStorage() {
    EmbeddedChannel ch = new EmbeddedChannel(HttpIngress.codec());
    ch.writeInbound(
        Unpooled.copiedBuffer(
            "POST /api/v1/write HTTP/1.1\r\nContent-Length: 2\r\n\r\nab",
            StandardCharsets.ISO_8859_1));
    HttpRequest req = ch.readInbound();
    assertInstanceOf(CompactHeaders.class, req.headers());
    LastHttpContent last = ch.readInbound();
    assertInstanceOf(LazyHeaders.class, last.trailingHeaders());
    assertTrue(last.trailingHeaders().isEmpty());
    assertEquals("ab", last.content().toString(StandardCharsets.ISO_8859_1));
    last.release();
    assertFalse(ch.finish());
    assertEquals(
        List.of("2"), req.headers().getAll(HttpHeaderNames.CONTENT_LENGTH), "the head as read");
  }
}
