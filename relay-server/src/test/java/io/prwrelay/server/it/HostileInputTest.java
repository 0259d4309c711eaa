package io.prwrelay.server.it;

import static io.prwrelay.testing.RawProto.bytes;
import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.sample;
import static io.prwrelay.testing.RawProto.series;
import static io.prwrelay.testing.RawProto.str;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdOutputStream;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.V2RawProto;
import io.prwrelay.testkit.ScriptedDownstream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.xerial.snappy.Snappy;

/**
 * Hostile senders against a real relay socket: decompression bombs, oversize and endless bodies,
 * trickling heads and bodies, 100,000 tenants in one request, 10,000 labels in one series, tenant
 * values no downstream may see, and wrong wire types in every field position. Each gets a 4xx or
 * 5xx naming what was wrong; after each the relay still answers a normal write with 204 and {@code
 * /-/healthy} with 200; nothing leaks (the leak check fails the class).
 */
class HostileInputTest {
  private static final int MAX_REQUEST = 4 << 20;
  private static final int MAX_DECOMPRESSED = 16 << 20;
  private static RelayFixture relay;

  @BeforeAll
  static void start() throws Exception {
    relay =
        new RelayFixture(
            Map.of(
                "relay.server.max-request-bytes",
                Integer.toString(MAX_REQUEST),
                "relay.server.max-decompressed-bytes",
                Integer.toString(MAX_DECOMPRESSED),
                // The bombs here test the decompressed-size cap; TinyRequestTest tests the ratio.
                "relay.server.max-decompression-ratio",
                "1000000",
                "relay.server.read-timeout",
                "1s",
                "relay.tenant.missing",
                "reject"));
  }

  @AfterAll
  static void stop() throws Exception {
    relay.close();
  }

  @AfterEach
  void relayStillServes() throws Exception {
    HttpResponse<String> w = relay.write(series(label("service_id", "healthy"), sample(1, 1)));
    assertEquals(204, w.statusCode(), w.body());
    assertEquals(200, relay.get("/-/healthy").statusCode());
  }

  // ---- decompression bombs ----

  @Test
  void snappyBombIs400BeforeAllocating() throws Exception {
    byte[] bomb = Snappy.compress(new byte[64 << 20]);
    assertTrue(bomb.length < MAX_REQUEST);
    Answer a = post(bomb, "snappy");
    assertEquals(400, a.status, a.body);
    assertEquals(
        "cannot decompress the snappy body: snappy block declares 67108864 decompressed bytes,"
            + " more than the limit of 16777216 (relay.server.max-decompressed-bytes=16777216)",
        a.body);
  }

  @Test
  void snappyBlockDeclaringFourGigabytesIs400() throws Exception {
    Answer a = post(bytes(0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00), "snappy");
    assertEquals(400, a.status, a.body);
    assertTrue(a.body.contains("declares 4294967295 decompressed bytes"), a.body);
  }

  @Test
  void zstdBombDeclaringItsSizeIs400() throws Exception {
    Answer a = post(Zstd.compress(new byte[256 << 20]), "zstd");
    assertEquals(400, a.status, a.body);
    assertEquals(
        "cannot decompress the zstd body: zstd frame declares 268435456 decompressed bytes, more"
            + " than the limit of 16777216 (relay.server.max-decompressed-bytes=16777216)",
        a.body);
  }

  @Test
  void zstdBombWithoutADeclaredSizeIs400AtTheCap() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZstdOutputStream z = new ZstdOutputStream(out)) {
      byte[] zeros = new byte[1 << 20];
      for (int i = 0; i < 64; i++) {
        z.write(zeros);
      }
    }
    Answer a = post(out.toByteArray(), "zstd");
    assertEquals(400, a.status, a.body);
    assertEquals(
        "cannot decompress the zstd body: zstd body decompresses to more bytes than the limit of"
            + " 16777216 (relay.server.max-decompressed-bytes=16777216)",
        a.body);
  }

  // ---- a body of the other protocol ----

  @Test
  void aPrw2BodySentAsPrw1Is400NamingTheContentTypeItNeeds() throws Exception {
    byte[] v2 =
        cat(
            V2RawProto.symbols("", "service_id", "as-v1"),
            V2RawProto.series(V2RawProto.refs(1, 2), V2RawProto.sample(1, 1)));
    HttpResponse<String> a = relay.write(v2);
    assertEquals(400, a.statusCode(), a.body());
    assertTrue(
        a.body()
            .contains(
                "the body is a PRW 2.0 request sent as PRW 1.0; send it with Content-Type"
                    + " application/x-protobuf;proto=io.prometheus.write.v2.Request"),
        a.body());
    assertTrue(!relay.downstream.counts().containsKey("as-v1"), "nothing is forwarded");
  }

  @Test
  void aPrw1BodySentAsPrw2Is400NamingTheContentTypeItNeeds() throws Exception {
    HttpResponse<String> a = relay.writeV2(series(label("service_id", "as-v2"), sample(1, 1)));
    assertEquals(400, a.statusCode(), a.body());
    assertTrue(
        a.body()
            .contains(
                "the body is a PRW 1.0 request sent as PRW 2.0; send it with Content-Type"
                    + " application/x-protobuf"),
        a.body());
    assertTrue(!relay.downstream.counts().containsKey("as-v2"), "nothing is forwarded");
  }

  // ---- bodies over the cap, endless and slow ----

  @Test
  void declaredBodyOverTheCapIs413BeforeTheBodyIsSent() throws Exception {
    try (Raw c = new Raw()) {
      c.send(head("Content-Length: " + (MAX_REQUEST + 1)));
      c.send(new byte[64 * 1024]);
      Answer a = c.read();
      assertEquals(413, a.status, a.body);
      assertEquals(
          "request body of 4194305 bytes exceeds relay.server.max-request-bytes=4194304", a.body);
      assertTrue(c.endsWithin(5_000), "the connection ends");
    }
  }

  @Test
  void chunkedBodyOverTheCapIs413() throws Exception {
    try (Raw c = new Raw()) {
      c.send(head("Transfer-Encoding: chunked"));
      byte[] chunk = chunk(new byte[256 * 1024]);
      for (int sent = 0; sent <= MAX_REQUEST; sent += 256 * 1024) {
        c.send(chunk);
      }
      Answer a = c.read();
      assertEquals(413, a.status, a.body);
      assertEquals("request body exceeds relay.server.max-request-bytes=4194304", a.body);
      assertTrue(c.endsWithin(5_000), "the connection ends");
    }
  }

  @Test
  void endlessChunkedBodyIs413AndTheConnectionEndsWhenTheSenderStops() throws Exception {
    try (Raw c = new Raw()) {
      c.send(head("Transfer-Encoding: chunked"));
      AtomicBoolean stop = new AtomicBoolean();
      Thread writer =
          new Thread(
              () -> {
                byte[] chunk = chunk(new byte[16 * 1024]);
                try {
                  while (!stop.get()) {
                    c.send(chunk);
                  }
                } catch (IOException closed) {
                  // The relay ended the connection.
                }
              });
      writer.start();
      Answer a = c.read();
      stop.set(true);
      writer.join(10_000);
      assertEquals(413, a.status, a.body);
      assertTrue(a.body.contains("relay.server.max-request-bytes"), a.body);
      assertTrue(c.endsWithin(5_000), "the connection ends");
    }
  }

  @Test
  void moreTrailerFieldsThanTheBoundAre431NamingTheBound() throws Exception {
    StringBuilder trailer = new StringBuilder();
    for (int i = 0; i <= 100; i++) {
      trailer.append("X-T").append(i).append(": v\r\n");
    }
    Answer a = chunkedWithTrailer(trailer.toString());
    assertEquals(431, a.status, a.body);
    assertEquals(
        "request trailer fields too large: more than 100 header fields (at most 100 fields and"
            + " 16384 bytes)",
        a.body);
  }

  @Test
  void aTrailerFieldLargerThanTheBoundIs431NamingTheBound() throws Exception {
    Answer a = chunkedWithTrailer("X-Big: " + "v".repeat(20_000) + "\r\n");
    assertEquals(431, a.status, a.body);
    assertTrue(a.body.startsWith("request trailer fields too large: "), a.body);
    assertTrue(a.body.endsWith("(at most 100 fields and 16384 bytes)"), a.body);
  }

  /** A chunked write whose one chunk is a valid request, then {@code trailer}'s fields. */
  private static Answer chunkedWithTrailer(String trailer) throws Exception {
    try (Raw c = new Raw()) {
      c.send(head("Transfer-Encoding: chunked"));
      c.send(chunk(Snappy.compress(series(label("service_id", "trailed"), sample(1, 1)))));
      c.send(("0\r\n" + trailer + "\r\n").getBytes(StandardCharsets.US_ASCII));
      Answer a = c.read();
      assertTrue(c.endsWithin(5_000), "the connection ends");
      return a;
    }
  }

  @Test
  void tricklingRequestHeadIs408() throws Exception {
    assertTricklingIs408(
        "POST /api/v1/write HTTP/1.1\r\nHost: relay\r\nX-Slow: ",
        "request head not received within relay.server.read-timeout=PT1S");
  }

  @Test
  void tricklingBodyIs408() throws Exception {
    assertTricklingIs408(
        head("Content-Length: 1000"),
        "request body not received within relay.server.read-timeout=PT1S");
  }

  /**
   * Sends {@code start}, then one byte every 100 ms: the relay answers 408 with {@code message} and
   * ends the connection.
   */
  private static void assertTricklingIs408(String start, String message) throws Exception {
    try (Raw c = new Raw()) {
      c.send(start);
      Thread trickle = trickle(c);
      Answer a = c.read();
      trickle.interrupt();
      trickle.join(5_000);
      assertEquals(408, a.status, a.body);
      assertEquals(message, a.body);
      assertTrue(c.endsWithin(5_000), "the connection ends");
    }
  }

  // ---- many tenants, many labels ----

  @Test
  void aHundredThousandTenantsInOneRequestGet400NamingTheTenantBound() throws Exception {
    ByteArrayOutputStream request = new ByteArrayOutputStream();
    for (int i = 0; i < 100_000; i++) {
      request.write(series(label("service_id", "t" + i), sample(i, 1)));
    }
    byte[] body = Snappy.compress(request.toByteArray());
    Answer a;
    try (Raw c = new Raw()) {
      c.send(head("Content-Length: " + body.length));
      c.send(body);
      a = c.read();
    }
    assertEquals(400, a.status, a.body);
    // The reader stops at the first tenant over the default bound, before any batch is built.
    assertTrue(
        a.body.startsWith("too many tenants at byte ")
            && a.body.contains(
                " in timeseries[10000]: the request carries more than 10000 tenants"
                    + " (relay.tenant.max-per-request)"),
        a.body);
    assertTrue(
        relay.downstream.counts().keySet().stream().noneMatch(t -> t.matches("t\\d+")),
        () -> "nothing of the request is forwarded: " + relay.downstream.counts().keySet());
  }

  @Test
  void tenThousandLabelsInOneSeriesReachTheDownstreamWhoseRejectionIsPassedOn() throws Exception {
    List<byte[]> labels = new ArrayList<>();
    labels.add(label("__name__", "wide"));
    for (int i = 0; i < 10_000; i++) {
      labels.add(label(String.format(Locale.ROOT, "l%05d", i), "v"));
    }
    labels.add(label("service_id", "wide-tenant"));
    labels.add(sample(1, 1));
    relay.downstream.rule(
        "wide-tenant",
        () ->
            ScriptedDownstream.Reply.status(
                400, "series has too many labels (actual: 10002, limit: 30)"));
    HttpResponse<String> r = relay.write(series(labels.toArray(new byte[0][])));
    assertEquals(400, r.statusCode(), r.body());
    assertTrue(r.body().contains("wide-tenant"), r.body());
    assertTrue(r.body().contains("series has too many labels"), r.body());
  }

  // ---- tenant values ----

  static Stream<Arguments> badTenants() {
    return Stream.of(
        Arguments.of("CR LF", "a\r\nX-Injected: 1", "invalid_character"),
        Arguments.of("NUL", "a\0b", "invalid_character"),
        Arguments.of("slash", "a/b", "invalid_character"),
        Arguments.of("non-ASCII", "m\u00fcller", "invalid_character"),
        Arguments.of("151 bytes", "x".repeat(151), "too_long"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badTenants")
  void tenantValueThatIsNoTenantIdIs400NamingTheSeries(String name, String value, String problem)
      throws Exception {
    byte[] request =
        cat(
            series(label("service_id", "fine"), sample(1, 1)),
            series(label("service_id", value), sample(1, 1)));
    HttpResponse<String> r = relay.write(request);
    assertEquals(400, r.statusCode(), r.body());
    assertEquals(
        "series without a valid tenant at byte "
            + (request.length - series(label("service_id", value), sample(1, 1)).length)
            + " in timeseries[1]: the value of tenant label service_id is not a valid tenant ID ("
            + problem
            + ") and relay.tenant.missing is reject\n",
        r.body());
  }

  // ---- wrong wire types ----

  static Stream<Arguments> wrongWireTypes() {
    byte[] tenant = label("service_id", "t");
    return Stream.of(
        Arguments.of("WriteRequest.timeseries as varint", bytes(0x08, 0x01), "WriteRequest"),
        Arguments.of("WriteRequest.metadata as fixed32", bytes(0x1D, 0, 0, 0, 0), "WriteRequest"),
        Arguments.of("TimeSeries.labels as varint", series(bytes(0x08, 0x01)), "timeseries[0]"),
        // Inside a series, fields after the tenant label are forwarded unread
        // (docs/ARCHITECTURE.md, "The data path"): these come before it.
        Arguments.of(
            "TimeSeries.samples as fixed64",
            series(bytes(0x11, 0, 0, 0, 0, 0, 0, 0, 0), tenant),
            "timeseries[0]"),
        Arguments.of(
            "TimeSeries.exemplars as varint", series(bytes(0x18, 0x01), tenant), "timeseries[0]"),
        Arguments.of(
            "TimeSeries.histograms as fixed32",
            series(bytes(0x25, 0, 0, 0, 0), tenant),
            "timeseries[0]"),
        Arguments.of(
            "Label.name as varint",
            series(len(1, bytes(0x08, 0x01), str(2, "v"))),
            "timeseries[0].labels[0]"),
        Arguments.of(
            "Label.value as fixed64",
            series(len(1, str(1, "service_id"), bytes(0x11, 0, 0, 0, 0, 0, 0, 0, 0))),
            "timeseries[0].labels[0]"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("wrongWireTypes")
  void wrongWireTypeIs400NamingTheField(String name, byte[] request, String field)
      throws Exception {
    HttpResponse<String> r = relay.write(request);
    assertEquals(400, r.statusCode(), r.body());
    assertTrue(r.body().startsWith("malformed request at byte "), r.body());
    assertTrue(r.body().contains(" in " + field), r.body());
    assertTrue(r.body().contains("has wire type"), r.body());
  }

  // ---- helpers ----

  private static Answer post(byte[] body, String encoding) throws Exception {
    try (Raw c = new Raw()) {
      c.send(head("Content-Encoding: " + encoding + "\r\nContent-Length: " + body.length, false));
      c.send(body);
      return c.read();
    }
  }

  private static String head(String extra) {
    return head(extra, true);
  }

  private static String head(String extra, boolean snappy) {
    return "POST /api/v1/write HTTP/1.1\r\nHost: relay\r\n"
        + "Content-Type: application/x-protobuf\r\n"
        + (snappy ? "Content-Encoding: snappy\r\n" : "")
        + "X-Prometheus-Remote-Write-Version: 0.1.0\r\n"
        + extra
        + "\r\n\r\n";
  }

  private static byte[] chunk(byte[] data) {
    return cat(
        (Integer.toHexString(data.length) + "\r\n").getBytes(StandardCharsets.US_ASCII),
        data,
        bytes('\r', '\n'));
  }

  /** Sends one byte every 100 ms until interrupted or the connection ends. */
  private static Thread trickle(Raw c) {
    Thread t =
        new Thread(
            () -> {
              try {
                while (!Thread.currentThread().isInterrupted()) {
                  c.send(new byte[] {'a'});
                  Thread.sleep(100);
                }
              } catch (IOException | InterruptedException end) {
                // Stopped by the test or by the relay.
              }
            });
    t.start();
    return t;
  }

  private record Answer(int status, Map<String, String> headers, String body) {}

  /** A client connection speaking raw HTTP/1.1 to the relay. */
  private static final class Raw implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    Raw() throws IOException {
      socket = new Socket("127.0.0.1", relay.relay.address().getPort());
      socket.setSoTimeout(120_000);
      out = socket.getOutputStream();
      in = socket.getInputStream();
    }

    synchronized void send(byte[] b) throws IOException {
      out.write(b);
      out.flush();
    }

    void send(String s) throws IOException {
      send(s.getBytes(StandardCharsets.ISO_8859_1));
    }

    /** Reads one answer: status line, headers, and a body of {@code Content-Length} bytes. */
    Answer read() throws IOException {
      String status = line();
      Map<String, String> headers = new LinkedHashMap<>();
      for (String h = line(); !h.isEmpty(); h = line()) {
        int colon = h.indexOf(':');
        headers.put(
            h.substring(0, colon).trim().toLowerCase(Locale.ROOT), h.substring(colon + 1).trim());
      }
      int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
      byte[] body = in.readNBytes(length);
      return new Answer(
          Integer.parseInt(status.split(" ")[1]),
          headers,
          new String(body, StandardCharsets.UTF_8).strip());
    }

    private String line() throws IOException {
      StringBuilder b = new StringBuilder();
      for (int c = in.read(); c != '\n'; c = in.read()) {
        if (c < 0) {
          throw new IOException("connection ended inside an answer: " + b);
        }
        if (c != '\r') {
          b.append((char) c);
        }
      }
      return b.toString();
    }

    /** True when the relay ends the connection within {@code millis}. */
    boolean endsWithin(int millis) throws IOException {
      socket.setSoTimeout(millis);
      try {
        while (in.read() >= 0) {
          // Nothing more is expected; keep reading until the end.
        }
        return true;
      } catch (SocketException reset) {
        return true;
      } catch (SocketTimeoutException stillOpen) {
        return false;
      }
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
