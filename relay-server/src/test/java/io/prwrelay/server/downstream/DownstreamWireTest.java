package io.prwrelay.server.downstream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.Future;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.config.RelayVersion;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.protocol.WrittenCounts;
import io.prwrelay.server.transport.Transport;
import io.prwrelay.testing.RawProto;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The exact bytes of a downstream request (request line and headers, in order) and the handling of
 * raw responses, against a plain socket server: what a downstream sees must not change when the
 * client's internals do. The expected heads are what the client built on Netty's {@code
 * HttpClientCodec} sent.
 */
class DownstreamWireTest {
  private static final String UA = "prw-relay/" + RelayVersion.VERSION;

  private EventLoopGroup group;
  private RawServer server;
  private DownstreamClient client;
  private ByteBuf body;

  @BeforeEach
  void start() throws IOException {
    group = Transport.group(1);
    server = new RawServer();
    ByteBuf plain = PooledByteBufAllocator.DEFAULT.heapBuffer();
    plain.writeBytes(RawProto.series(RawProto.label("__name__", "m"), RawProto.sample(1, 1)));
    body = SnappyCodec.encode(plain, PooledByteBufAllocator.DEFAULT);
    plain.release();
  }

  @AfterEach
  void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    body.release();
    server.close();
    group.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
  }

  private void client(Map<String, String> extra) throws Exception {
    Map<String, String> props = new HashMap<>(extra);
    props.putIfAbsent("relay.downstream.url", "http://127.0.0.1:" + server.port() + "/api/v1/push");
    RelayConfig config = RelayConfig.load(null, props, Map.of());
    client =
        new DownstreamClient(
            config.downstream(), group, Transport.socketChannel(), PooledByteBufAllocator.DEFAULT);
  }

  private AttemptOutcome send(String tenant, Protocol protocol, long timeoutMillis)
      throws Exception {
    EventLoop loop = group.next();
    return loop.submit(
            () ->
                client.send(
                    loop, tenant, protocol, body, TimeUnit.MILLISECONDS.toNanos(timeoutMillis)))
        .get()
        .get(20, TimeUnit.SECONDS);
  }

  private AttemptOutcome send(String tenant) throws Exception {
    return send(tenant, Protocol.V1, 10_000);
  }

  private String host() {
    return "127.0.0.1:" + server.port();
  }

  private byte[] bodyBytes() {
    return ByteBufUtil.getBytes(body);
  }

  @Test
  void remoteWrite1RequestHeadIsByteForByteTheSame() throws Exception {
    client(Map.of());
    server.reply("HTTP/1.1 204 No Content\r\n\r\n");

    assertEquals(204, send("team-a").status());

    RawServer.Request r = server.requests.get(0);
    assertEquals(
        "POST /api/v1/push HTTP/1.1\r\n"
            + "host: "
            + host()
            + "\r\n"
            + "content-type: application/x-protobuf\r\n"
            + "content-encoding: snappy\r\n"
            + "X-Prometheus-Remote-Write-Version: 0.1.0\r\n"
            + "user-agent: "
            + UA
            + "\r\n"
            + "X-Scope-OrgID: team-a\r\n"
            + "content-length: "
            + body.readableBytes()
            + "\r\n"
            + "connection: keep-alive\r\n"
            + "\r\n",
        r.head);
    assertArrayEquals(bodyBytes(), r.body);
  }

  @Test
  void remoteWrite2RequestWithBearerTokenTenantInPathAndOwnHeaderIsByteForByteTheSame()
      throws Exception {
    client(
        Map.of(
            "relay.downstream.url",
            "http://127.0.0.1:" + server.port() + "/t/{tenant}/push?x=1",
            "relay.downstream.tenant-header",
            "X-Tenant",
            "relay.downstream.bearer-token",
            "s3cr3t"));
    server.reply("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");

    assertEquals(200, send("team-b", Protocol.V2, 10_000).status());

    assertEquals(
        "POST /t/team-b/push?x=1 HTTP/1.1\r\n"
            + "host: "
            + host()
            + "\r\n"
            + "content-type: application/x-protobuf;proto=io.prometheus.write.v2.Request\r\n"
            + "content-encoding: snappy\r\n"
            + "X-Prometheus-Remote-Write-Version: 2.0.0\r\n"
            + "user-agent: "
            + UA
            + "\r\n"
            + "X-Tenant: team-b\r\n"
            + "content-length: "
            + body.readableBytes()
            + "\r\n"
            + "connection: keep-alive\r\n"
            + "authorization: Bearer s3cr3t\r\n"
            + "\r\n",
        server.requests.get(0).head);
  }

  @Test
  void basicAuthIsTheLastHeader() throws Exception {
    client(
        Map.of(
            "relay.downstream.basic-auth.username",
            "u",
            "relay.downstream.basic-auth.password",
            "p:w"));
    server.reply("HTTP/1.1 204 No Content\r\n\r\n");

    send("t1");

    String auth = Base64.getEncoder().encodeToString("u:p:w".getBytes(StandardCharsets.UTF_8));
    assertTrue(
        server.requests.get(0).head.endsWith("authorization: Basic " + auth + "\r\n\r\n"),
        server.requests.get(0).head);
  }

  @Test
  void keepAliveResponsesReuseOneConnection() throws Exception {
    client(Map.of());
    server.reply("HTTP/1.1 204 No Content\r\n\r\n");
    server.reply("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    server.reply("HTTP/1.1 204 No Content\r\n\r\n");

    assertEquals(204, send("a").status());
    assertEquals(200, send("b").status());
    assertEquals(204, send("c").status());

    assertEquals(1, server.connections());
    assertEquals(3, server.requests.size());
  }

  @Test
  void attemptsBeyondTheLoopsConnectionsWaitForOneAndReuseIt() throws Exception {
    client(Map.of("relay.downstream.max-connections", "1"));
    server.reply("HTTP/1.1 204 No Content\r\n\r\n");
    server.reply("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    EventLoop loop = group.next();
    long timeout = TimeUnit.SECONDS.toNanos(10);

    List<Future<AttemptOutcome>> both =
        loop.submit(
                () ->
                    List.of(
                        client.send(loop, "a", Protocol.V1, body, timeout),
                        client.send(loop, "b", Protocol.V1, body, timeout)))
            .get();

    assertEquals(204, both.get(0).get(20, TimeUnit.SECONDS).status());
    assertEquals(200, both.get(1).get(20, TimeUnit.SECONDS).status());
    assertEquals(1, server.connections());
    assertTrue(server.requests.get(1).head.contains("X-Scope-OrgID: b\r\n"));
  }

  @Test
  void attemptWaitingForAConnectionFailsAtItsDeadline() throws Exception {
    client(Map.of("relay.downstream.max-connections", "1"));
    server.reply(null); // the first request holds the only connection
    EventLoop loop = group.next();

    List<Future<AttemptOutcome>> both =
        loop.submit(
                () ->
                    List.of(
                        client.send(loop, "a", Protocol.V1, body, TimeUnit.SECONDS.toNanos(30)),
                        client.send(
                            loop, "b", Protocol.V1, body, TimeUnit.MILLISECONDS.toNanos(200))))
            .get();

    AttemptOutcome waited = both.get(1).get(20, TimeUnit.SECONDS);
    assertEquals(AttemptOutcome.TRANSPORT_FAILURE, waited.status());
    assertEquals("no response within 200 ms", waited.message());
    assertEquals(1, server.requests.size());
    client.close();
    assertEquals(AttemptOutcome.TRANSPORT_FAILURE, both.get(0).getNow().status());
    client = null;
  }

  @Test
  void connectionCloseResponseIsHonouredAndTheNextRequestOpensANewConnection() throws Exception {
    client(Map.of());
    server.reply("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
    server.reply("HTTP/1.1 204 No Content\r\n\r\n");

    assertEquals(204, send("a").status());
    assertEquals(204, send("a").status());

    assertEquals(2, server.connections());
  }

  @Test
  void chunkedErrorBodyBecomesTheMessage() throws Exception {
    client(Map.of());
    server.reply(
        "HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "6\r\nout of\r\n"
            + "d\r\n order sample\r\n"
            + "0\r\n\r\n");
    server.reply("HTTP/1.1 204 No Content\r\n\r\n");

    AttemptOutcome o = send("a");

    assertEquals(400, o.status());
    assertEquals("out of order sample", o.message());
    assertEquals(-1, o.retryAfterMillis());
    assertNull(o.written());
    assertEquals(204, send("a").status());
    assertEquals(1, server.connections());
  }

  @Test
  void malformedResponseIsATransportFailureAndTheNextRequestOpensANewConnection() throws Exception {
    client(Map.of());
    server.reply("HTTP/1.1 2OO OK\r\n\r\n");
    server.reply("HTTP/1.1 204 No Content\r\n\r\n");

    AttemptOutcome o = send("a");

    assertEquals(AttemptOutcome.TRANSPORT_FAILURE, o.status());
    assertEquals("downstream connection failed: malformed response: bad status code", o.message());
    assertEquals(204, send("a").status());
    assertEquals(2, server.connections());
  }

  @Test
  void http10BodyRunsToTheCloseAndTheConnectionIsNotReused() throws Exception {
    client(Map.of());
    server.reply("HTTP/1.0 500 Internal Server Error\r\n\r\nno ingesters\r\n" + RawServer.CLOSE);
    server.reply("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");

    AttemptOutcome o = send("a");

    assertEquals(500, o.status());
    assertEquals("no ingesters", o.message());
    assertEquals(200, send("a").status());
    assertEquals(2, server.connections());
  }

  @Test
  void retryAfterOfA429IsReported() throws Exception {
    client(Map.of());
    server.reply(
        "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 4\r\n\r\nslow");

    AttemptOutcome o = send("a");

    assertEquals(429, o.status());
    assertEquals("slow", o.message());
    assertEquals(7000, o.retryAfterMillis());
  }

  @Test
  void writtenCountsOfARemoteWrite2ReceiverAreReported() throws Exception {
    client(Map.of("relay.downstream.protocol", "v2"));
    server.reply(
        "HTTP/1.1 204 No Content\r\n"
            + "X-Prometheus-Remote-Write-Samples-Written: 3\r\n"
            + "X-Prometheus-Remote-Write-Histograms-Written: 1\r\n"
            + "X-Prometheus-Remote-Write-Exemplars-Written: 0\r\n\r\n");

    AttemptOutcome o = send("a", Protocol.V2, 10_000);

    assertEquals(new WrittenCounts(3, 1, 0), o.written());
  }

  @Test
  void longErrorBodyIsCutForTheMessage() throws Exception {
    client(Map.of());
    String text = "x".repeat(2000);
    server.reply(
        "HTTP/1.1 500 Internal Server Error\r\nContent-Length: "
            + text.length()
            + "\r\n\r\n"
            + text);

    AttemptOutcome o = send("a");

    assertEquals(500, o.status());
    assertEquals("x".repeat(512) + "...", o.message());
  }

  @Test
  void bodyLargerThanTheLimitIsATransportFailure() throws Exception {
    client(Map.of());
    int n = DownstreamClient.MAX_RESPONSE_BODY + 1;
    server.reply(
        "HTTP/1.1 500 Internal Server Error\r\nContent-Length: " + n + "\r\n\r\n" + "y".repeat(n));

    AttemptOutcome o = send("a");

    assertEquals(AttemptOutcome.TRANSPORT_FAILURE, o.status());
  }

  @Test
  void noAnswerWithinTheTimeoutIsATransportFailureAndTheConnectionIsNotReused() throws Exception {
    client(Map.of());
    server.reply(null); // holds the first request unanswered
    server.reply("HTTP/1.1 204 No Content\r\n\r\n");

    AttemptOutcome o = send("a", Protocol.V1, 200);

    assertEquals(AttemptOutcome.TRANSPORT_FAILURE, o.status());
    assertEquals("no response within 200 ms", o.message());
    assertEquals(204, send("a").status());
    assertEquals(2, server.connections());
  }

  @Test
  void connectionClosedBeforeTheAnswerIsATransportFailure() throws Exception {
    client(Map.of());
    server.reply(RawServer.CLOSE);

    AttemptOutcome o = send("a");

    assertEquals(AttemptOutcome.TRANSPORT_FAILURE, o.status());
    assertEquals("connection closed before the downstream answered", o.message());
  }

  @Test
  void refusedConnectionIsATransportFailureThatNamesNoAddress() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    client(Map.of("relay.downstream.url", "http://127.0.0.1:" + port + "/api/v1/push"));

    AttemptOutcome o = send("a");

    assertEquals(AttemptOutcome.TRANSPORT_FAILURE, o.status());
    // The message reaches senders in 503 bodies: it names neither the downstream's host nor port.
    assertEquals("cannot connect to the downstream: connection refused", o.message());
  }

  /**
   * Accepts connections, reads each request (head up to the blank line, then Content-Length bytes)
   * and writes the next scripted raw response; a response with {@code Connection: close}, or ending
   * in {@link #CLOSE}, closes the socket after it.
   */
  static final class RawServer implements AutoCloseable {
    static final String CLOSE = "\u0000close";

    record Request(int connection, String head, byte[] body) {}

    final List<Request> requests = new CopyOnWriteArrayList<>();
    private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
    private final ServerSocket socket;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    RawServer() throws IOException {
      socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      acceptor = new Thread(this::accept, "raw-downstream");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return socket.getLocalPort();
    }

    int connections() {
      return accepted.size();
    }

    /** The next response, raw; {@code null} for none (the request stays unanswered). */
    void reply(String raw) {
      replies.add(raw == null ? "" : raw);
    }

    private void accept() {
      try {
        while (true) {
          Socket s = socket.accept();
          accepted.add(s);
          int index = accepted.size() - 1;
          Thread t = new Thread(() -> serve(s, index), "raw-downstream-" + index);
          t.setDaemon(true);
          t.start();
        }
      } catch (IOException closed) {
        // the server is closed
      }
    }

    private void serve(Socket s, int index) {
      try (s) {
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream();
        while (true) {
          String head = readHead(in);
          if (head == null) {
            return;
          }
          int length = 0;
          for (String line : head.split("\r\n")) {
            if (line.regionMatches(true, 0, "content-length:", 0, 15)) {
              length = Integer.parseInt(line.substring(15).trim());
            }
          }
          byte[] b = in.readNBytes(length);
          requests.add(new Request(index, head, b));
          String reply = replies.poll(10, TimeUnit.SECONDS);
          if (reply == null || reply.equals(CLOSE)) {
            return;
          }
          if (reply.isEmpty()) {
            // Unanswered: wait until the client gives up and closes.
            while (in.read() >= 0) {
              // discard
            }
            return;
          }
          boolean close = reply.endsWith(CLOSE);
          if (close) {
            reply = reply.substring(0, reply.length() - CLOSE.length());
          }
          out.write(reply.getBytes(StandardCharsets.ISO_8859_1));
          out.flush();
          if (close || reply.toLowerCase().contains("\r\nconnection: close\r\n")) {
            return;
          }
        }
      } catch (IOException | InterruptedException e) {
        // the connection ends
      }
    }

    private static String readHead(InputStream in) throws IOException {
      ByteArrayOutputStream head = new ByteArrayOutputStream();
      int matched = 0;
      byte[] end = {'\r', '\n', '\r', '\n'};
      while (matched < 4) {
        int c = in.read();
        if (c < 0) {
          return null;
        }
        head.write(c);
        matched = c == end[matched] ? matched + 1 : c == '\r' ? 1 : 0;
      }
      return head.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
      socket.close();
      for (Socket s : new ArrayList<>(accepted)) {
        s.close();
      }
    }
  }
}
