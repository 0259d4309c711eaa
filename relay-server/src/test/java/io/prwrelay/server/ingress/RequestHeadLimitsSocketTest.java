package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.RawProto;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Over real sockets: a request on any path whose body does not arrive within {@code
 * relay.server.read-timeout} gets 408 and gives its connection slot back, and a head with more
 * header fields than {@link HttpIngress#MAX_HEADER_FIELDS} gets 431 naming the bound; other senders
 * keep being served.
 */
@Timeout(60)
class RequestHeadLimitsSocketTest {
  private static byte[] series(String tenant) {
    return RawProto.series(RawProto.label("service_id", tenant), RawProto.sample(1, 1));
  }

  private static String headers(int count) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < count; i++) {
      b.append("x").append(i).append(": v\r\n");
    }
    return b.toString();
  }

  /** The answer's body, read to the end of the connection. */
  private static String rest(InputStream in) throws Exception {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    in.transferTo(b);
    return b.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aProbeWhoseBodyNeverEndsGets408AndGivesItsSlotBack() throws Exception {
    try (RelayFixture f =
        new RelayFixture(
            Map.of("relay.server.max-connections", "1", "relay.server.read-timeout", "300ms"))) {
      try (Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        out.write(
            "GET /-/healthy HTTP/1.1\r\nHost: relay\r\nContent-Length: 1000000000\r\n\r\nabc"
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = s.getInputStream();
        List<String> head = TestRequests.head(in);
        assertEquals("HTTP/1.1 408 Request Timeout", head.get(0));
        assertTrue(head.contains("connection: close"), head.toString());
        String body = rest(in);
        assertTrue(
            body.contains("request body not received within relay.server.read-timeout="), body);
      }
      // The slot is given back when the relay has closed its side, which the client may see first.
      long until = System.nanoTime() + 10_000_000_000L;
      while (f.relay.metrics().registry().get("relay.connections").gauge().value() > 0
          && System.nanoTime() < until) {
        Thread.sleep(10);
      }
      assertEquals(204, f.write(series("t")).statusCode(), "the slot is free again");
      assertTrue(
          f.relay
              .metrics()
              .scrape()
              .contains("relay_http_requests_total{endpoint=\"healthy\",status=\"408\"} 1.0"),
          f.relay.metrics().scrape());
    }
  }

  @Test
  void aProbeWithABodyThatArrivesInTimeIsAnswered() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.server.read-timeout", "300ms"));
        Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(
          "GET /-/healthy HTTP/1.1\r\nHost: relay\r\nContent-Length: 3\r\n\r\nabc"
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      List<String> first = TestRequests.head(in);
      assertEquals("HTTP/1.1 200 OK", first.get(0));
      assertTrue(first.contains("content-length: 3"), first.toString());
      assertEquals("OK\n", new String(in.readNBytes(3), StandardCharsets.US_ASCII));
      Thread.sleep(600); // past the read timeout: the answered request arms nothing
      out.write(
          "GET /-/healthy HTTP/1.1\r\nHost: relay\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertEquals("HTTP/1.1 200 OK", TestRequests.head(in).get(0));
    }
  }

  @Test
  void aHeadWithMoreHeaderFieldsThanTheBoundGets431AndOthersKeepBeingServed() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of())) {
      int port = f.relay.address().getPort();
      for (String request :
          List.of(
              "GET /-/healthy HTTP/1.1\r\nHost: relay\r\n" + headers(100) + "\r\n",
              "POST /api/v1/write HTTP/1.1\r\nHost: relay\r\nContent-Type: application/x-protobuf\r\n"
                  + "Content-Encoding: snappy\r\nContent-Length: 0\r\n"
                  + headers(HttpIngress.MAX_HEADER_FIELDS)
                  + "\r\n")) {
        try (Socket s = new Socket("127.0.0.1", port)) {
          s.setSoTimeout(10_000);
          s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
          s.getOutputStream().flush();
          InputStream in = s.getInputStream();
          List<String> head = TestRequests.head(in);
          assertEquals("HTTP/1.1 431 Request Header Fields Too Large", head.get(0), request);
          String body = rest(in);
          assertTrue(body.contains("more than 100 header fields"), body);
        }
      }
      try (Socket s = new Socket("127.0.0.1", port)) {
        s.setSoTimeout(10_000);
        s.getOutputStream()
            .write(
                ("GET /-/healthy HTTP/1.1\r\nHost: relay\r\n" + headers(99) + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
        assertEquals("HTTP/1.1 200 OK", TestRequests.head(s.getInputStream()).get(0), "100 fields");
      }
      assertEquals(204, f.write(series("t")).statusCode());
      assertEquals(1, f.downstream.received().size());
    }
  }

  @Test
  void aHeadLargerThanTheByteBoundGets431() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of());
        Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
      s.setSoTimeout(10_000);
      String big = "x-big: " + "v".repeat(HttpIngress.MAX_HEADER_BYTES) + "\r\n";
      s.getOutputStream()
          .write(
              ("GET /-/healthy HTTP/1.1\r\nHost: relay\r\n" + big + "\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      InputStream in = s.getInputStream();
      assertEquals("HTTP/1.1 431 Request Header Fields Too Large", TestRequests.head(in).get(0));
      assertTrue(rest(in).contains("16384 bytes"));
    }
  }
}
