package io.prwrelay.server.ingress;

import static io.prwrelay.server.ingress.TestRequests.line;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

/** The relay over real sockets: pipelining, chunked bodies, slow senders, keep-alive, shutdown. */
class RelayServerSocketTest {
  private static byte[] request(String tenant) throws Exception {
    return Snappy.compress(
        RawProto.series(
            RawProto.label("__name__", "m"),
            RawProto.label("service_id", tenant),
            RawProto.sample(1, 1)));
  }

  private static byte[] head(String extra, int length) {
    return ("POST /api/v1/write HTTP/1.1\r\nHost: relay\r\nContent-Type: application/x-protobuf\r\n"
            + "Content-Encoding: snappy\r\n"
            + extra
            + (length >= 0 ? "Content-Length: " + length + "\r\n" : "")
            + "\r\n")
        .getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * Reads HTTP/1.1 responses with Content-Length (or none for 204) and returns their status lines.
   */
  private static List<String> readResponses(InputStream in, int count) throws Exception {
    List<String> statuses = new ArrayList<>();
    while (statuses.size() < count) {
      String status = line(in);
      int length = 0;
      for (String h = line(in); !h.isEmpty(); h = line(in)) {
        if (h.toLowerCase().startsWith("content-length:")) {
          length = Integer.parseInt(h.substring(15).trim());
        }
      }
      in.readNBytes(length);
      statuses.add(status);
    }
    return statuses;
  }

  /**
   * Writes {@code bytes} on a new connection to a relay with {@code settings} and asserts that the
   * relay answers with {@code statusLine} alone and closes the connection.
   */
  private static void answeredAndClosed(
      Map<String, String> settings, String statusLine, byte[]... bytes) throws Exception {
    try (RelayFixture f = new RelayFixture(settings);
        Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      for (byte[] b : bytes) {
        out.write(b);
      }
      out.flush();
      assertEquals(List.of(statusLine), readResponses(s.getInputStream(), 1));
      assertEquals(-1, s.getInputStream().read(), "connection closed");
    }
  }

  /**
   * Sends {@code head} and its whole body before reading anything, as a sender that does not wait
   * for an early answer does, and returns the status line it then reads back.
   */
  private static String earlyAnswer(int port, byte[] head, int bodyBytes) throws Exception {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(head);
      byte[] chunk = new byte[64 * 1024];
      for (int sent = 0; sent < bodyBytes; sent += chunk.length) {
        out.write(chunk);
      }
      out.flush();
      return line(s.getInputStream());
    }
  }

  @Test
  void earlyAnswersReachASenderThatKeepsSendingItsBody() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.server.max-request-bytes", "1048576"))) {
      int port = f.relay.address().getPort();
      for (int i = 0; i < 10; i++) {
        assertEquals(
            "HTTP/1.1 413 Request Entity Too Large",
            earlyAnswer(port, head("", 8 << 20), 8 << 20),
            "try " + i);
      }
      byte[] gzip =
          ("POST /api/v1/write HTTP/1.1\r\nHost: relay\r\nContent-Encoding: gzip\r\n"
                  + "Content-Length: 4194304\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII);
      for (int i = 0; i < 5; i++) {
        assertEquals("HTTP/1.1 415 Unsupported Media Type", earlyAnswer(port, gzip, 4 << 20));
      }
      assertEquals(204, f.write(RawProto.series(RawProto.label("service_id", "t"))).statusCode());
    }
  }

  @Test
  void pipelinedWritesAreAnsweredInOrderWhileTheFirstIsStillBeingDelivered() throws Exception {
    try (RelayFixture f = new RelayFixture()) {
      f.downstream.script("slow", Reply.slow(Duration.ofMillis(300)));
      try (Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
        s.setSoTimeout(10_000);
        byte[] slow = request("slow");
        byte[] fast = request("fast");
        OutputStream out = s.getOutputStream();
        out.write(RawProto.cat(head("", slow.length), slow, head("", fast.length), fast));
        out.write(
            ("GET /nope HTTP/1.1\r\nHost: relay\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        List<String> statuses = readResponses(s.getInputStream(), 3);
        assertEquals(
            List.of("HTTP/1.1 204 No Content", "HTTP/1.1 204 No Content", "HTTP/1.1 404 Not Found"),
            statuses);
      }
      List<String> order = new ArrayList<>();
      f.downstream.received().forEach(r -> order.add(r.tenant()));
      assertEquals(List.of("slow", "fast"), order, "the second request waits for the first");
    }
  }

  @Test
  void aDeliveredWriteIsAnsweredWithItsStatusLineAloneAndTheConnectionServesTheNext()
      throws Exception {
    try (RelayFixture f = new RelayFixture()) {
      byte[] body = request("plain");
      try (Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        out.write(RawProto.cat(head("", body.length), body, head("", body.length), body));
        byte[] http10 =
            ("POST /api/v1/write HTTP/1.0\r\nConnection: keep-alive\r\n"
                    + "Content-Encoding: snappy\r\nContent-Length: "
                    + body.length
                    + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        out.write(RawProto.cat(http10, body));
        out.write(
            "GET /-/healthy HTTP/1.1\r\nHost: relay\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        String expected =
            "HTTP/1.1 204 No Content\r\n\r\n"
                + "HTTP/1.1 204 No Content\r\n\r\n"
                + "HTTP/1.1 204 No Content\r\nconnection: keep-alive\r\n\r\n"
                + "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n"
                + "content-length: 3\r\n\r\nOK\n";
        byte[] got = s.getInputStream().readNBytes(expected.length());
        assertEquals(expected, new String(got, StandardCharsets.US_ASCII));
      }
      assertEquals(3, f.downstream.byTenant().get("plain").size());
    }
  }

  @Test
  void chunkedBodyIsAccepted() throws Exception {
    try (RelayFixture f = new RelayFixture()) {
      byte[] body = request("chunked");
      try (Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        out.write(head("Transfer-Encoding: chunked\r\n", -1));
        int half = body.length / 2;
        out.write((Integer.toHexString(half) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(body, 0, half);
        out.write(
            ("\r\n" + Integer.toHexString(body.length - half) + "\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.write(body, half, body.length - half);
        out.write("\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        assertEquals(List.of("HTTP/1.1 204 No Content"), readResponses(s.getInputStream(), 1));
      }
      assertEquals(1, f.downstream.byTenant().get("chunked").size());
    }
  }

  @Test
  void chunkedBodyWithTrailersIsAcceptedAndTheConnectionServesTheNext() throws Exception {
    try (RelayFixture f = new RelayFixture()) {
      byte[] body = request("trailed");
      try (Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        for (int i = 0; i < 2; i++) {
          out.write(head("Transfer-Encoding: chunked\r\n", -1));
          out.write(
              (Integer.toHexString(body.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
          out.write(body);
          // More trailers than the trailer map makes room for.
          out.write(
              "\r\n0\r\nX-Checksum: abc\r\nX-Sent-By: test\r\nX-Third: 3\r\n\r\n"
                  .getBytes(StandardCharsets.US_ASCII));
        }
        out.flush();
        assertEquals(
            List.of("HTTP/1.1 204 No Content", "HTTP/1.1 204 No Content"),
            readResponses(s.getInputStream(), 2));
      }
      assertEquals(2, f.downstream.byTenant().get("trailed").size());
    }
  }

  @Test
  void chunkedBodyOverTheLimitIs413() throws Exception {
    answeredAndClosed(
        Map.of("relay.server.max-request-bytes", "100"),
        "HTTP/1.1 413 Request Entity Too Large",
        head("Transfer-Encoding: chunked\r\n", -1),
        ("c8\r\n" + "x".repeat(200) + "\r\n").getBytes(StandardCharsets.US_ASCII));
  }

  @Test
  void slowSenderGets408AndIsDisconnected() throws Exception {
    answeredAndClosed(
        Map.of("relay.server.read-timeout", "300ms"),
        "HTTP/1.1 408 Request Timeout",
        head("", 100),
        new byte[10]);
  }

  /**
   * A sender that keeps trickling its body after the 408 is only lingered on: the request head
   * clock must not start again on the discarded bytes and answer a second, head 408 into the
   * closing connection (which counted a 408 for a request that never was, and logged a stack trace
   * when it tried to linger a second time).
   */
  @Test
  void bodyStillTricklingAfterItsTimeoutGetsOne408AndNoHeadTimeout() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.server.read-timeout", "300ms"));
        Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(head("", 100_000));
      out.flush();
      InputStream in = s.getInputStream();
      assertEquals(List.of("HTTP/1.1 408 Request Timeout"), readResponses(in, 1));
      // Lingering closes after 2 s without data: a byte every 100 ms for 1.5 s keeps it lingering
      // well past the 300 ms read timeout.
      for (int i = 0; i < 15; i++) {
        out.write('x');
        out.flush();
        Thread.sleep(100);
      }
      String scrape = f.relay.metrics().scrape();
      assertTrue(
          !scrape.contains("relay_http_requests_total{endpoint=\"other\",status=\"408\"}"),
          "no head timeout on a connection already answered and closing: " + scrape);
      s.shutdownOutput();
      assertEquals(-1, in.read(), "nothing after the one answer, then closed");
    }
  }

  @Test
  void idleConnectionIsClosed() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.server.idle-timeout", "200ms"))) {
      try (Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
        s.setSoTimeout(10_000);
        assertEquals(-1, s.getInputStream().read(), "closed by the relay");
      }
    }
  }

  @Test
  void aRequestFramedBothByChunksAndByLengthIs400AndItsConnectionClosed() throws Exception {
    // The shape of request smuggling: Netty's decoder refuses it (RFC 9112 6.1 lets a server
    // reject it), and nothing after it on the connection is read.
    try (RelayFixture f = new RelayFixture();
        Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
      s.setSoTimeout(10_000);
      s.getOutputStream()
          .write(
              ("GET /-/healthy HTTP/1.1\r\nHost: relay\r\nContent-Length: 4\r\n"
                      + "Transfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n"
                      + "GET /-/healthy HTTP/1.1\r\nHost: relay\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      assertEquals(List.of("HTTP/1.1 400 Bad Request"), readResponses(s.getInputStream(), 1));
      assertEquals(-1, s.getInputStream().read(), "connection closed, the next request unread");
    }
  }

  @Test
  void aHeadRequestRefusedBeforeItsEndpointGetsTheHeadersWithoutTheBody() throws Exception {
    StringBuilder head = new StringBuilder("HEAD /metrics HTTP/1.1\r\n");
    for (int i = 0; i <= HttpIngress.MAX_HEADER_FIELDS; i++) {
      head.append("X-").append(i).append(": v\r\n");
    }
    try (RelayFixture f = new RelayFixture();
        Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write((head + "\r\n").getBytes(StandardCharsets.US_ASCII));
      InputStream in = s.getInputStream();
      assertEquals("HTTP/1.1 431 Request Header Fields Too Large", line(in));
      boolean hasLength = false;
      for (String h = line(in); !h.isEmpty(); h = line(in)) {
        hasLength |= h.toLowerCase().startsWith("content-length:") && !h.endsWith(" 0");
      }
      assertTrue(hasLength, "the length of the body a GET would get");
      assertEquals(-1, in.read(), "no body, and the connection closed");
    }
  }

  @Test
  void downstreamConnectionsAreReusedAcrossRequests() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.max-connections", "2"))) {
      byte[] body =
          RawProto.cat(
              RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(1, 1)),
              RawProto.series(RawProto.label("service_id", "b"), RawProto.sample(1, 1)));
      for (int i = 0; i < 20; i++) {
        assertEquals(204, f.write(body).statusCode());
      }
      assertEquals(40, f.downstream.received().size());
      assertTrue(
          f.downstream.connectionsAccepted() <= 2,
          "connections opened: " + f.downstream.connectionsAccepted());
    }
  }

  @Test
  void shutdownFinishesInFlightRequestsAndStopsAccepting() throws Exception {
    RelayFixture f = new RelayFixture();
    try {
      f.downstream.script("a", Reply.slow(Duration.ofMillis(500)));
      byte[] body = RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(1, 1));
      CompletableFuture<HttpResponse<String>> inFlight = f.writeAsync(body);
      Await.until(
          "the request at the downstream",
          Duration.ofSeconds(5),
          () -> !f.downstream.received().isEmpty());
      int port = f.relay.address().getPort();
      f.relay.shutdown(Duration.ofSeconds(5));
      assertEquals(204, inFlight.get().statusCode(), "the in-flight request completed");
      boolean refused;
      try (Socket s = new Socket("127.0.0.1", port)) {
        refused = false;
      } catch (java.net.ConnectException e) {
        refused = true;
      }
      assertTrue(refused, "no longer accepting connections");
    } finally {
      f.downstream.close();
    }
  }
}
