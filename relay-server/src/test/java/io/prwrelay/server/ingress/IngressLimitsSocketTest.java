package io.prwrelay.server.ingress;

import static io.prwrelay.server.ingress.TestRequests.line;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testing.RawProto;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.DoublePredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.xerial.snappy.Snappy;

/**
 * The memory budget and the connection bound over real sockets: stalled senders that sent most of
 * large bodies cannot take more than their share of the budget while a legitimate sender keeps
 * being served, the budget is whole again once they leave, {@code Expect: 100-continue} is answered
 * by what the relay would do with the body, and connections beyond the bound get 503.
 */
@Timeout(60)
class IngressLimitsSocketTest {
  private static final int MIB = 1 << 20;

  private static byte[] head(String extra, long length) {
    return ("POST /api/v1/write HTTP/1.1\r\nHost: relay\r\nContent-Type: application/x-protobuf\r\n"
            + "Content-Encoding: snappy\r\n"
            + extra
            + "Content-Length: "
            + length
            + "\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII);
  }

  /** The value of a metric without labels, from the relay's own exposition. */
  private static double metric(RelayFixture f, String name) {
    return Scrape.value(f.relay.metrics().scrape(), name);
  }

  /**
   * Waits (bounded) until {@code name} satisfies {@code ok}, as connections close asynchronously.
   */
  private static void awaitMetric(RelayFixture f, String name, DoublePredicate ok)
      throws Exception {
    Await.until(name + " as wanted", Duration.ofSeconds(5), () -> ok.test(metric(f, name)));
  }

  private static byte[] series(String tenant) {
    return RawProto.series(RawProto.label("service_id", tenant), RawProto.sample(1, 1));
  }

  @Test
  void stalledLargeBodiesCannotExhaustTheBudgetAndOthersKeepBeingServed() throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put("relay.server.max-request-bytes", Integer.toString(MIB));
    props.put("relay.server.max-inflight-bytes", "4MiB");
    try (RelayFixture f = new RelayFixture(props)) {
      assertEquals(4.0 * MIB, metric(f, "relay_inflight_body_limit_bytes"));
      InetSocketAddress relay = new InetSocketAddress("127.0.0.1", f.relay.address().getPort());
      InetAddress attacker = InetAddress.getByAddress(new byte[] {127, 0, 0, 2});
      List<Socket> stalled = new ArrayList<>();
      int refused = 0;
      try {
        for (int i = 0; i < 12; i++) {
          Socket s = new Socket();
          stalled.add(s);
          s.bind(new InetSocketAddress(attacker, 0));
          s.connect(relay);
          s.setSoTimeout(10_000);
          double held = metric(f, "relay_inflight_body_bytes");
          OutputStream out = s.getOutputStream();
          out.write(head("", MIB));
          // A body holds what it sent: 600 KiB of the declared 1 MiB grow its buffer to 1 MiB.
          out.write(new byte[600 * 1024]);
          out.flush();
          // Either the relay answers (refused) or the budget grows by the declared size (admitted,
          // waiting for the rest of the body).
          InputStream in = s.getInputStream();
          for (int wait = 0;
              wait < 1000
                  && in.available() == 0
                  && metric(f, "relay_inflight_body_bytes") != held + MIB;
              wait++) {
            Thread.sleep(10);
          }
          if (in.available() > 0) {
            assertEquals("HTTP/1.1 503 Service Unavailable", line(in));
            refused++;
          } else {
            assertEquals(held + MIB, metric(f, "relay_inflight_body_bytes"), "admitted");
          }
          assertTrue(metric(f, "relay_inflight_body_bytes") <= 4.0 * MIB);
        }
        assertEquals(10, refused, "one address holds at most half the budget: two bodies");
        assertEquals(2.0 * MIB, metric(f, "relay_inflight_body_bytes"));
        for (int i = 0; i < 5; i++) {
          assertEquals(204, f.write(series("t" + i)).statusCode(), "legitimate write " + i);
        }
        assertEquals(5, f.downstream.received().size());
      } finally {
        for (Socket s : stalled) {
          s.close();
        }
      }
      awaitMetric(f, "relay_inflight_body_bytes", v -> v == 0);
      String scrape = f.relay.metrics().scrape();
      assertTrue(scrape.contains("relay_inflight_rejected_total{reason=\"client\"} 10.0"), scrape);
      assertEquals(204, f.write(series("after")).statusCode());
    }
  }

  @Test
  void expectContinueIsAnsweredBeforeTheBodyIsSent() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.server.max-request-bytes", "65536"))) {
      byte[] body = Snappy.compress(series("t"));
      try (Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
        s.setSoTimeout(10_000);
        s.getOutputStream().write(head("Expect: 100-continue\r\n", body.length));
        assertEquals(
            List.of("HTTP/1.1 100 Continue"),
            TestRequests.head(s.getInputStream()),
            "no body sent yet");
        s.getOutputStream().write(body);
        assertEquals("HTTP/1.1 204 No Content", TestRequests.head(s.getInputStream()).get(0));
      }
      try (Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
        s.setSoTimeout(10_000);
        s.getOutputStream().write(head("Expect: 100-continue\r\n", 1 << 20));
        List<String> answer = TestRequests.head(s.getInputStream());
        assertEquals("HTTP/1.1 413 Request Entity Too Large", answer.get(0));
        assertTrue(answer.contains("connection: close"), answer.toString());
      }
      assertTrue(f.downstream.received().size() == 1);
    }
  }

  @Test
  void connectionsBeyondTheBoundGet503WithRetryAfter() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.server.max-connections", "2"))) {
      int port = f.relay.address().getPort();
      List<Socket> held = new ArrayList<>();
      try {
        for (int i = 0; i < 2; i++) {
          held.add(new Socket("127.0.0.1", port));
        }
        awaitMetric(f, "relay_connections", v -> v == 2);
        try (Socket extra = new Socket("127.0.0.1", port)) {
          extra.setSoTimeout(10_000);
          extra
              .getOutputStream()
              .write(
                  "GET /-/healthy HTTP/1.1\r\nHost: r\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          List<String> answer = TestRequests.head(extra.getInputStream());
          assertEquals("HTTP/1.1 503 Service Unavailable", answer.get(0));
          assertTrue(answer.contains("retry-after: 5"), answer.toString());
        }
      } finally {
        for (Socket s : held) {
          s.close();
        }
      }
      awaitMetric(f, "relay_connections", v -> v == 0);
      assertEquals(204, f.write(series("t")).statusCode());
      assertTrue(
          f.relay
              .metrics()
              .scrape()
              .contains("relay_connections_rejected_total{action=\"answered\"} 1.0"));
    }
  }

  @Test
  void aConnectionThatSendsNothingGivesItsSlotBackAfterTheReadTimeout() throws Exception {
    try (RelayFixture f =
        new RelayFixture(
            Map.of("relay.server.max-connections", "1", "relay.server.read-timeout", "300ms"))) {
      try (Socket silent = new Socket("127.0.0.1", f.relay.address().getPort())) {
        silent.setSoTimeout(10_000);
        assertEquals(-1, silent.getInputStream().read(), "closed without an answer");
      }
      awaitMetric(f, "relay_connections", v -> v == 0);
      assertEquals(204, f.write(series("t")).statusCode(), "the slot is free again");
      assertTrue(
          f.relay
              .metrics()
              .scrape()
              .contains("relay_connections_rejected_total{action=\"silent\"} 1.0"));
    }
  }

  @Test
  void aConnectionThatBeginsAHeadAndStopsGets408FromItsStart() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.server.read-timeout", "300ms"));
        Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write("POST /api/v1/wr".getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      List<String> answer = TestRequests.head(s.getInputStream());
      assertEquals("HTTP/1.1 408 Request Timeout", answer.get(0));
      assertTrue(
          !f.relay.metrics().scrape().contains("action=\"silent\""),
          "a connection that sent something is not silent");
    }
  }

  @Test
  void connectionsBeyondTwiceTheBoundAreClosedAtOnce() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.server.max-connections", "1"))) {
      int port = f.relay.address().getPort();
      try (Socket served = new Socket("127.0.0.1", port);
          Socket answered = new Socket("127.0.0.1", port)) {
        awaitMetric(f, "relay_connections", v -> v == 2);
        try (Socket closed = new Socket("127.0.0.1", port)) {
          closed.setSoTimeout(10_000);
          int first;
          try {
            first = closed.getInputStream().read();
          } catch (java.net.SocketException reset) {
            first = -1;
          }
          assertEquals(-1, first, "closed without an answer");
        }
      }
      assertTrue(
          f.relay
              .metrics()
              .scrape()
              .contains("relay_connections_rejected_total{action=\"closed\"} 1.0"));
    }
  }
}
