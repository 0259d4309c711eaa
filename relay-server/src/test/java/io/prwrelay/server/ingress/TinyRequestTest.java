package io.prwrelay.server.ingress;

import static io.prwrelay.server.ingress.TestRequests.line;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.ZstdOutputStream;
import io.netty.buffer.PoolArenaMetric;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testing.RawProto;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.DoublePredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.xerial.snappy.Snappy;

/**
 * Attacks of one unauthenticated client sending a few bytes, each over real sockets against a real
 * relay: the attacker gets a clear 4xx/5xx, the relay keeps answering other clients on fresh
 * connections (one per event loop and more, so a stuck or dead loop shows), and the pooled direct
 * memory in use returns to where it was.
 */
@Timeout(90)
class TinyRequestTest {
  private static final int MIB = 1 << 20;

  // ---------------------------------------------------------------- answers and a client that
  // does not read them

  @Test
  void aClientThatNeverReadsItsAnswersIsNotAnsweredAheadAndIsDisconnected() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.server.read-timeout", "2s"))) {
      warmUp(f);
      long baseline = activeDirectBytes();
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      for (int i = 0; i < 3000; i++) {
        b.write("GET /metrics HTTP/1.1\r\nHost: relay\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      }
      byte[] gets = b.toByteArray();
      try (Socket attacker = new Socket()) {
        attacker.setReceiveBufferSize(4096);
        attacker.connect(address(f));
        // The relay stops reading from the attacker: this write may never complete.
        CompletableFuture<Void> sending =
            CompletableFuture.runAsync(
                () -> {
                  try {
                    attacker.getOutputStream().write(gets);
                  } catch (IOException closed) {
                    // The relay disconnected the attacker.
                  }
                });
        Thread.sleep(1000);
        assertServesOthers(f);
        assertTrue(
            activeDirectBytes() - baseline < 4 * MIB,
            "answers waiting for the attacker to read are bounded: "
                + (activeDirectBytes() - baseline)
                + " bytes");
        awaitMetric(
            f, "relay_connections_rejected_total{action=\"not_reading\"}", v -> v == 1, 10_000);
        assertClosed(attacker);
        sending.cancel(true);
      }
      assertServesOthers(f);
      awaitDirectBytes(baseline);
    }
  }

  @Test
  void hundredsOfPipelinedWritesAreEachDeliveredOnceAndAnsweredInOrder() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of())) {
      int n = 300;
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      for (int i = 0; i < n; i++) {
        byte[] body = Snappy.compress(series("t" + (i % 3), i));
        b.write(writeHead("Content-Length: " + body.length));
        b.write(body);
      }
      int answered204 = 0;
      String last = null;
      try (Socket s = new Socket()) {
        s.connect(address(f));
        s.setSoTimeout(20_000);
        s.getOutputStream().write(b.toByteArray());
        s.getOutputStream().flush();
        InputStream in = s.getInputStream();
        while (answered204 < n) {
          Response r = Response.read(in);
          if (r == null) {
            break;
          }
          last = r.statusLine + " " + r.body;
          if (r.status != 204) {
            assertEquals(503, r.status, r.body);
            assertTrue(r.body.contains("requests sent ahead of their answers"), r.body);
            assertEquals("close", r.header("connection"));
            break;
          }
          answered204++;
        }
      }
      // Every write the relay delivered was answered 204, in order; none was delivered unanswered.
      // Once the relay holds no request body, it has nothing left to deliver.
      awaitMetric(f, "relay_inflight_body_bytes", v -> v == 0, 5_000);
      assertEquals(answered204, f.downstream.totalSeries(), "delivered = answered; last " + last);
      assertTrue(answered204 > IngressHandler.MAX_PIPELINED, "answered " + answered204);
      assertServesOthers(f);
    }
  }

  // ---------------------------------------------------------------- decompressed bytes

  @Test
  void aSixByteSnappyBodyDeclaring128MiBIsRefusedByTheRatioBeforeAllocating() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of())) {
      warmUp(f);
      long baseline = activeDirectBytes();
      // A snappy block is its length preamble (here 128 MiB) and then its elements.
      byte[] bomb = {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x40, 0x00, 0x00};
      for (int i = 0; i < 20; i++) {
        Response r = post(f, bomb, "snappy", "application/x-protobuf");
        assertEquals(400, r.status, r.body);
        assertEquals(
            "cannot decompress the snappy body: snappy block declares 134217728 decompressed"
                + " bytes, more than the limit of 1536 (relay.server.max-decompression-ratio=256"
                + " times the 6-byte body)",
            r.body);
      }
      assertServesOthers(f);
      awaitDirectBytes(baseline);
    }
  }

  @Test
  void aZstdStreamWithoutADeclaredSizeStopsAtTheRatio() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of())) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      try (ZstdOutputStream z = new ZstdOutputStream(out)) {
        byte[] zeros = new byte[MIB];
        for (int i = 0; i < 64; i++) {
          z.write(zeros);
        }
      }
      byte[] bomb = out.toByteArray();
      assertTrue(bomb.length < 8 * 1024, "a small body: " + bomb.length);
      Response r = post(f, bomb, "zstd", "application/x-protobuf");
      assertEquals(400, r.status, r.body);
      assertTrue(
          r.body.endsWith(
              "(relay.server.max-decompression-ratio=256 times the " + bomb.length + "-byte body)"),
          r.body);
      assertServesOthers(f);
    }
  }

  @Test
  void whatABodyDecompressesToIsHeldInTheBudget() throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put("relay.server.max-request-bytes", Integer.toString(MIB));
    props.put("relay.server.max-inflight-bytes", Integer.toString(5 * MIB / 2));
    props.put("relay.server.max-inflight-bytes-per-client", Integer.toString(5 * MIB / 2));
    props.put("relay.server.max-decompression-ratio", "1000000");
    try (RelayFixture f = new RelayFixture(props)) {
      // Never fits: a 2-byte-per-MiB snappy body declaring 4 MiB, more than anyone may hold.
      byte[] huge = Snappy.compress(new byte[4 * MIB]);
      Response never = post(f, huge, "snappy", "application/x-protobuf");
      assertEquals(413, never.status, never.body);
      assertTrue(
          never.body.contains("relay.server.max-inflight-bytes-per-client=2621440"), never.body);

      // Fits, but not while another client holds 1 MiB of the budget (a body that sent 600 KiB of
      // its declared 1 MiB: its buffer has grown to 1 MiB): 503, then 204 once it left.
      byte[] request = manySeries("a", 1500);
      byte[] body = Snappy.compress(request);
      assertTrue(
          request.length + body.length > 3 * MIB / 2 && request.length + body.length < 2 * MIB,
          "compressed and decompressed: " + (request.length + body.length));
      try (Socket stalled = new Socket()) {
        stalled.bind(new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 2}), 0));
        stalled.connect(address(f));
        stalled.getOutputStream().write(writeHead("Content-Length: " + MIB));
        stalled.getOutputStream().write(new byte[600 * 1024]);
        awaitMetric(f, "relay_inflight_body_bytes", v -> v == MIB, 5_000);
        Response busy = post(f, body, "snappy", "application/x-protobuf");
        assertEquals(503, busy.status, busy.body);
        assertEquals("5", busy.header("retry-after"));
        assertTrue(busy.body.contains("relay.server.max-inflight-bytes=2621440"), busy.body);
        assertTrue(
            metricValue(f, "relay_inflight_rejected_total{reason=\"total\"}") == 1,
            f.relay.metrics().scrape());
      }
      awaitMetric(f, "relay_inflight_body_bytes", v -> v == 0, 5_000);
      assertEquals(204, post(f, body, "snappy", "application/x-protobuf").status);
      assertEquals(1500, f.downstream.totalSeries());
      assertEquals(0, metricValue(f, "relay_inflight_body_bytes"), "released after the answer");
    }
  }

  @Test
  void aChunkedHeadReservesItsFirstBufferNotTheLargestBodyAndGrowsAsItArrives() throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put("relay.server.max-request-bytes", Integer.toString(8 * MIB));
    props.put("relay.server.max-inflight-bytes", Integer.toString(8 * MIB));
    try (RelayFixture f = new RelayFixture(props)) {
      List<Socket> heads = new ArrayList<>();
      try {
        // Ten chunked heads that send nothing more: before, each held 8 MiB and the first one
        // locked every other sender out for the read timeout.
        for (int i = 0; i < 10; i++) {
          Socket s = new Socket();
          heads.add(s);
          s.connect(address(f));
          s.getOutputStream().write(writeHead("Transfer-Encoding: chunked"));
        }
        awaitMetric(
            f,
            "relay_inflight_body_bytes",
            v -> v == 10.0 * IngressHandler.FIRST_BUFFER_BYTES,
            5_000);
        // A chunked body of 1 MiB compressed grows its reservation as it arrives and is delivered.
        byte[] request = manySeries("c", 1500);
        byte[] body = Snappy.compress(request);
        try (Socket s = new Socket()) {
          s.connect(address(f));
          s.setSoTimeout(10_000);
          OutputStream out = s.getOutputStream();
          out.write(writeHead("Transfer-Encoding: chunked"));
          for (int off = 0; off < body.length; off += 16 * 1024) {
            int n = Math.min(16 * 1024, body.length - off);
            out.write((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body, off, n);
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
          }
          out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          out.flush();
          assertEquals(204, Response.read(s.getInputStream()).status);
        }
        assertEquals(1500, f.downstream.totalSeries());
      } finally {
        for (Socket s : heads) {
          s.close();
        }
      }
      awaitMetric(f, "relay_inflight_body_bytes", v -> v == 0, 5_000);
    }
  }

  // ---------------------------------------------------------------- HTTP edges

  @Test
  void aWriteFollowedByAHalfCloseIsDeliveredAndAnswered() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of())) {
      byte[] body = Snappy.compress(series("h", 1));
      try (Socket s = new Socket()) {
        s.connect(address(f));
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        out.write(writeHead("Content-Length: " + body.length));
        out.write(body);
        out.flush();
        s.shutdownOutput();
        InputStream in = s.getInputStream();
        assertEquals(204, Response.read(in).status);
        assertEquals(-1, in.read(), "closed once everything sent was answered");
      }
      assertEquals(1, f.downstream.totalSeries());
    }
  }

  @Test
  void requestLinesOfOtherHttpVersionsAre505AndUnknownExpectationsAre417() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of())) {
      for (String version : List.of("HTTP/2.0", "HTTP/9.9", "HTTP/1.2")) {
        Response r = raw(f, "GET /-/healthy " + version + "\r\nHost: relay\r\n\r\n");
        assertEquals(505, r.status, version);
        assertEquals(
            "HTTP version " + version + " is not supported: send HTTP/1.1 or HTTP/1.0", r.body);
        assertEquals("close", r.header("connection"));
      }
      Response r =
          raw(
              f,
              "POST /api/v1/write HTTP/1.1\r\nHost: relay\r\nExpect: foo\r\n"
                  + "Content-Type: application/x-protobuf\r\nContent-Encoding: snappy\r\n"
                  + "Content-Length: 5\r\n\r\n");
      assertEquals(417, r.status);
      assertEquals("unsupported Expect: foo (only 100-continue is supported)", r.body);
      assertEquals(0, f.downstream.received().size());
      assertServesOthers(f);
    }
  }

  @Test
  void transferCodingsOtherThanChunkedAloneAre501() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of())) {
      for (String codings :
          List.of(
              "Transfer-Encoding: gzip, chunked\r\n",
              "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n")) {
        Response r =
            raw(
                f,
                "POST /api/v1/write HTTP/1.1\r\nHost: relay\r\n"
                    + codings
                    + "Content-Type: application/x-protobuf\r\nContent-Encoding: snappy\r\n\r\n"
                    + "5\r\nhello\r\n0\r\n\r\n");
        assertEquals(501, r.status, codings);
        assertTrue(r.body.startsWith("unsupported Transfer-Encoding: "), r.body);
        assertTrue(r.body.endsWith(" (only chunked is supported)"), r.body);
        assertEquals("close", r.header("connection"));
      }
      // Without chunked last the body's length is unknown: RFC 9112 6.3 says 400.
      Response deflate =
          raw(
              f,
              "POST /api/v1/write HTTP/1.1\r\nHost: relay\r\nTransfer-Encoding: deflate\r\n"
                  + "Content-Type: application/x-protobuf\r\nContent-Encoding: snappy\r\n\r\n");
      assertEquals(400, deflate.status, deflate.body);
      Response chunked =
          raw(
              f,
              "POST /api/v1/write HTTP/1.1\r\nHost: relay\r\nTransfer-Encoding: Chunked\r\n"
                  + "Content-Type: application/x-protobuf\r\nContent-Encoding: snappy\r\n\r\n"
                  + "5\r\nhello\r\n0\r\n\r\n");
      assertEquals(400, chunked.status, "chunked alone is read, and a 5-byte body is not snappy");
      assertEquals(0, f.downstream.received().size());
      assertServesOthers(f);
    }
  }

  @Test
  void answersNameNeitherTheDownstreamHostNorItsPort() throws Exception {
    // Port 1 on loopback: nothing listens there (a port freed just now could be taken again by the
    // fixture's own downstream).
    try (RelayFixture f =
        new RelayFixture(Map.of("relay.downstream.url", "http://127.0.0.1:1/api/v1/push"))) {
      var r = f.write(series("x", 1));
      assertEquals(503, r.statusCode(), r.body());
      assertTrue(
          r.body().contains("cannot connect to the downstream: connection refused"), r.body());
      assertFalse(r.body().contains("127.0.0.1"), r.body());
      assertFalse(r.body().contains(":1"), r.body());
    }
  }

  // ---------------------------------------------------------------- helpers

  private static byte[] series(String tenant, long value) {
    return RawProto.series(RawProto.label("service_id", tenant), RawProto.sample(value, 1));
  }

  /** A request of {@code n} distinct series of one tenant, about 1 KiB each. */
  private static byte[] manySeries(String tenant, int n) {
    String pad = "x".repeat(1000);
    byte[][] all = new byte[n][];
    for (int i = 0; i < n; i++) {
      all[i] =
          RawProto.series(
              RawProto.cat(
                  RawProto.label("__name__", "m" + i),
                  RawProto.label("pad", pad + i),
                  RawProto.label("service_id", tenant)),
              RawProto.sample(i, 1));
    }
    return RawProto.cat(all);
  }

  /** The head of a snappy PRW 1.0 write with {@code framing} (its length or chunked). */
  private static byte[] writeHead(String framing) {
    return ("POST /api/v1/write HTTP/1.1\r\nHost: relay\r\n"
            + "Content-Type: application/x-protobuf\r\nContent-Encoding: snappy\r\n"
            + framing
            + "\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII);
  }

  private static InetSocketAddress address(RelayFixture f) {
    return new InetSocketAddress("127.0.0.1", f.relay.address().getPort());
  }

  /**
   * Fresh connections, more than there are event loops, each answered {@code /-/healthy} with 200
   * within two seconds: no loop is stuck or dead.
   */
  private static void assertServesOthers(RelayFixture f) throws Exception {
    for (int i = 0; i < 6; i++) {
      try (Socket s = new Socket()) {
        s.connect(address(f), 2000);
        s.setSoTimeout(2000);
        s.getOutputStream()
            .write(
                "GET /-/healthy HTTP/1.1\r\nHost: relay\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
        assertEquals(200, Response.read(s.getInputStream()).status, "health check " + i);
      }
    }
  }

  /**
   * What a legitimate client does, before a baseline of pooled memory is taken: the pool's chunks
   * and caches that any traffic brings are in place then.
   */
  private static void warmUp(RelayFixture f) throws Exception {
    for (int i = 0; i < 20; i++) {
      assertEquals(204, f.write(series("w" + i, i)).statusCode());
      assertEquals(200, f.get("/metrics").statusCode());
    }
    assertServesOthers(f);
  }

  /** Bytes of pooled direct memory handed out and not yet returned. */
  private static long activeDirectBytes() {
    long sum = 0;
    for (PoolArenaMetric a : PooledByteBufAllocator.DEFAULT.metric().directArenas()) {
      sum += a.numActiveBytes();
    }
    return sum;
  }

  /** Waits (bounded) until the pooled direct memory in use is back within 1 MiB of a baseline. */
  private static void awaitDirectBytes(long baseline) throws Exception {
    Await.until(
        "pooled direct memory back within 1 MiB of its baseline",
        Duration.ofSeconds(5),
        () -> activeDirectBytes() - baseline < MIB);
  }

  private static void assertClosed(Socket s) throws IOException {
    s.setSoTimeout(5000);
    InputStream in = s.getInputStream();
    byte[] drain = new byte[64 * 1024];
    try {
      while (in.read(drain) >= 0) {
        // What the relay wrote before it closed the connection.
      }
    } catch (SocketException reset) {
      // Closed with unread bytes: a reset is a close too.
    } catch (SocketTimeoutException e) {
      throw new AssertionError("the connection is still open", e);
    }
  }

  private static double metricValue(RelayFixture f, String series) {
    return Scrape.value(f.relay.metrics().scrape(), series);
  }

  private static void awaitMetric(RelayFixture f, String series, DoublePredicate ok, long millis)
      throws Exception {
    // Absent (a counter not incremented yet) is not yet as wanted.
    Await.until(
        series + " as wanted",
        Duration.ofMillis(millis),
        () -> ok.test(Scrape.valueOr(f.relay.metrics().scrape(), series, Double.NaN)));
  }

  private static Response post(RelayFixture f, byte[] body, String encoding, String type)
      throws Exception {
    try (Socket s = new Socket()) {
      s.connect(address(f));
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(
          ("POST /api/v1/write HTTP/1.1\r\nHost: relay\r\nContent-Type: "
                  + type
                  + "\r\nContent-Encoding: "
                  + encoding
                  + "\r\nContent-Length: "
                  + body.length
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      return Response.read(s.getInputStream());
    }
  }

  private static Response raw(RelayFixture f, String request) throws Exception {
    try (Socket s = new Socket()) {
      s.connect(address(f));
      s.setSoTimeout(10_000);
      s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      return Response.read(s.getInputStream());
    }
  }

  /** One HTTP/1.1 response read off a socket: status, headers (lower-case names), body. */
  private record Response(String statusLine, int status, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.get(name);
    }

    /** The next response, or {@code null} at the end of the stream. */
    static Response read(InputStream in) throws IOException {
      String status;
      try {
        status = line(in);
      } catch (EOFException | SocketException end) {
        return null;
      }
      Map<String, String> headers = new HashMap<>();
      for (String l = line(in); !l.isEmpty(); l = line(in)) {
        int colon = l.indexOf(':');
        headers.put(
            l.substring(0, colon).trim().toLowerCase(java.util.Locale.ROOT),
            l.substring(colon + 1).trim());
      }
      int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
      byte[] body = in.readNBytes(length);
      String text = new String(body, StandardCharsets.UTF_8);
      return new Response(
          status,
          Integer.parseInt(status.split(" ")[1]),
          headers,
          text.endsWith("\n") ? text.substring(0, text.length() - 1) : text);
    }
  }
}
