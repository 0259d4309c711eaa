package io.prwrelay.server.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.server.protocol.WrittenCounts;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The downstream response parser on raw responses, each fed whole, byte by byte and split at every
 * position: the same status, body, headers and keep-alive every way, and the bytes after a response
 * left unread.
 */
class ResponseParserTest {
  private static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  /** What the parser made of one response. */
  record Parsed(
      int status,
      String body,
      String retryAfter,
      WrittenCounts written,
      boolean keepAlive,
      String rest) {}

  /** Parses {@code raw} fed in the given pieces; {@code closeAtEnd} closes after the last. */
  private static Parsed parse(List<String> pieces, boolean closeAtEnd)
      throws ResponseParser.Malformed {
    ResponseParser p = new ResponseParser(1000);
    try {
      StringBuilder rest = new StringBuilder();
      boolean done = false;
      for (String piece : pieces) {
        ByteBuf in = ALLOC.directBuffer().writeBytes(piece.getBytes(StandardCharsets.ISO_8859_1));
        try {
          if (!done) {
            done = p.read(in, ALLOC);
          }
          rest.append(in.toString(StandardCharsets.ISO_8859_1));
        } finally {
          in.release();
        }
      }
      if (!done && closeAtEnd) {
        done = p.closed();
      }
      assertTrue(done, "response complete");
      ByteBuf body = p.body();
      return new Parsed(
          p.status(),
          body == null ? null : body.toString(StandardCharsets.UTF_8),
          p.retryAfter(),
          p.written(),
          p.keepAlive(),
          rest.toString());
    } finally {
      p.release();
    }
  }

  /** Parses {@code raw} whole, byte by byte and in two pieces at every split: all the same. */
  private static Parsed parseEveryWay(String raw, boolean closeAtEnd)
      throws ResponseParser.Malformed {
    Parsed whole = parse(List.of(raw), closeAtEnd);
    List<String> bytes = new ArrayList<>();
    for (int i = 0; i < raw.length(); i++) {
      bytes.add(raw.substring(i, i + 1));
    }
    assertEquals(whole, parse(bytes, closeAtEnd), "byte by byte");
    for (int i = 1; i < raw.length(); i++) {
      assertEquals(
          whole, parse(List.of(raw.substring(0, i), raw.substring(i)), closeAtEnd), "split " + i);
    }
    return whole;
  }

  private static Parsed parseEveryWay(String raw) throws ResponseParser.Malformed {
    return parseEveryWay(raw, false);
  }

  private static String malformed(String raw) {
    return assertThrows(ResponseParser.Malformed.class, () -> parse(List.of(raw), true))
        .getMessage();
  }

  @Test
  void emptyAnswersAllocateNoBodyAndKeepTheConnection() throws Exception {
    assertEquals(
        new Parsed(204, null, null, null, true, ""),
        parseEveryWay("HTTP/1.1 204 No Content\r\n\r\n"));
    assertEquals(
        new Parsed(200, null, null, null, true, ""),
        parseEveryWay("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nDate: x\r\n\r\n"));
    assertEquals(
        new Parsed(200, null, null, null, true, ""),
        parseEveryWay("HTTP/1.1 200\ncontent-length:0\n\n"));
  }

  @Test
  void fixedLengthBodyRetryAfterAndWrittenCounts() throws Exception {
    assertEquals(
        new Parsed(429, "slow", "7", null, true, ""),
        parseEveryWay(
            "HTTP/1.1 429 Too Many Requests\r\nretry-after:  7 \r\nContent-Length: 4\r\n\r\nslow"));
    assertEquals(
        new Parsed(204, null, null, new WrittenCounts(3, -1, 0), true, ""),
        parseEveryWay(
            "HTTP/1.1 204 No Content\r\n"
                + "X-Prometheus-Remote-Write-Samples-Written: 3\r\n"
                + "x-prometheus-remote-write-histograms-written: nope\r\n"
                + "X-Prometheus-Remote-Write-Exemplars-Written: +0\r\n\r\n"));
  }

  @Test
  void chunkedBodyWithExtensionsAndTrailers() throws Exception {
    assertEquals(
        new Parsed(400, "out of order sample", null, null, true, ""),
        parseEveryWay(
            "HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n"
                + "6;ext=1\r\nout of\r\n"
                + "D\r\n order sample\r\n"
                + "0\r\nX-Trailer: t\r\n\r\n"));
  }

  @Test
  void bytesAfterTheResponseStayUnread() throws Exception {
    assertEquals(
        new Parsed(200, "ok", null, null, true, "HTTP/1.1 204"),
        parseEveryWay("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 204"));
  }

  @Test
  void connectionHeadersAndVersionDecideKeepAlive() throws Exception {
    assertFalse(parseEveryWay("HTTP/1.1 204 No Content\r\nConnection: Close\r\n\r\n").keepAlive());
    assertFalse(
        parseEveryWay("HTTP/1.1 204 No Content\r\nConnection: te, close\r\n\r\n").keepAlive());
    assertFalse(parseEveryWay("HTTP/1.0 204 No Content\r\n\r\n").keepAlive());
    assertTrue(
        parseEveryWay("HTTP/1.0 204 No Content\r\nConnection: keep-alive\r\n\r\n").keepAlive());
    // Both framings: chunked wins, and the connection is not trusted with another request.
    Parsed both =
        parseEveryWay(
            "HTTP/1.1 500 x\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "2\r\nno\r\n0\r\n\r\n");
    assertEquals("no", both.body());
    assertFalse(both.keepAlive());
  }

  @Test
  void bodyWithoutLengthRunsToTheClose() throws Exception {
    Parsed p = parseEveryWay("HTTP/1.1 503 Service Unavailable\r\n\r\nbusy\nreally", true);
    assertEquals(new Parsed(503, "busy\nreally", null, null, false, ""), p);
    // A body cut short by the close: the status stands, with the body so far.
    assertEquals(
        new Parsed(500, "par", null, null, false, ""),
        parse(List.of("HTTP/1.1 500 x\r\nContent-Length: 10\r\n\r\npar"), true));
  }

  @Test
  void interimResponsesAreSkipped() throws Exception {
    assertEquals(
        new Parsed(200, null, null, null, true, ""),
        parseEveryWay("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
  }

  @Test
  void noHeadBeforeTheCloseIsNoResponse() throws Exception {
    ResponseParser p = new ResponseParser(1000);
    ByteBuf in = ALLOC.heapBuffer().writeBytes("HTTP/1.1 200 OK\r\nContent-".getBytes());
    try {
      assertFalse(p.read(in, ALLOC));
      assertFalse(p.closed());
    } finally {
      in.release();
      p.release();
    }
  }

  @Test
  void malformedResponsesAreRefused() {
    assertEquals("malformed response: bad status line", malformed("HTTP/2 200 OK\r\n\r\n"));
    assertEquals("malformed response: bad status line", malformed("SSH-2.0-OpenSSH_9.6\r\n"));
    assertEquals("malformed response: bad status code", malformed("HTTP/1.1 2x0 OK\r\n\r\n"));
    assertEquals(
        "malformed response: header line without a name",
        malformed("HTTP/1.1 200 OK\r\n: x\r\n\r\n"));
    assertEquals(
        "malformed response: bad Content-Length",
        malformed("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"));
    assertEquals(
        "malformed response: bad Content-Length",
        malformed("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"));
    assertEquals(
        "malformed response: bad chunk size",
        malformed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"));
    assertEquals(
        "malformed response: chunk longer than its size",
        malformed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n"));
    assertEquals(
        "malformed response: folded header line",
        malformed("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n 1\r\n\r\n"));
    assertEquals(
        "malformed response: 101 Switching Protocols to a write",
        malformed("HTTP/1.1 101 Switching Protocols\r\n\r\n"));
  }

  @Test
  void boundsAreKept() throws Exception {
    assertEquals(
        "response body larger than 1000 bytes",
        malformed("HTTP/1.1 500 x\r\nContent-Length: 1001\r\n\r\n"));
    assertEquals(
        "response body larger than 1000 bytes",
        malformed("HTTP/1.1 500 x\r\n\r\n" + "y".repeat(1001)));
    assertEquals(
        "response body larger than 1000 bytes",
        malformed(
            "HTTP/1.1 500 x\r\nTransfer-Encoding: chunked\r\n\r\n3e9\r\n" + "y".repeat(1001)));
    assertEquals(
        1000, parse(List.of("HTTP/1.1 500 x\r\n\r\n" + "y".repeat(1000)), true).body().length());
    assertEquals(
        "malformed response: status line longer than 4096 bytes",
        malformed("HTTP/1.1 200 " + "x".repeat(4096) + "\r\n\r\n"));
    assertEquals(
        "malformed response: status line longer than 4096 bytes",
        malformed("HTTP/1.1 200 " + "x".repeat(4096)));
    String header = "X-Filler: " + "f".repeat(1000) + "\r\n";
    assertEquals(
        "malformed response: headers longer than 8192 bytes",
        malformed("HTTP/1.1 200 OK\r\n" + header.repeat(9) + "\r\n"));
    // A status line of exactly the bound, and headers just under theirs, are fine.
    String line = "HTTP/1.1 200 " + "x".repeat(4096 - 13);
    assertEquals(200, parse(List.of(line + "\r\n" + header.repeat(8) + "\r\n"), true).status());
  }
}
