package io.prwrelay.server.ingress;

import static io.prwrelay.server.ingress.TestRequests.request;
import static io.prwrelay.server.ingress.TestRequests.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.testing.RawProto;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

/**
 * The ingress handler on an {@link EmbeddedChannel} with simulated time and a scripted downstream:
 * routing of paths and methods, header checks, size limits, decompression and parse errors, health,
 * the read timeout, pipelining, and the answer a delivered write gets.
 */
class IngressHandlerTest {
  private static final Map<String, String> BASE =
      Map.of(
          "relay.server.max-request-bytes", "1000",
          "relay.server.max-decompressed-bytes", "5000",
          "relay.tenant.missing", "reject",
          "relay.downstream.timeout", "2s",
          "relay.downstream.attempt-timeout", "1s");

  private final ScriptedSender sender = new ScriptedSender();
  private RelayMetrics metrics;
  private IngressFixture fixture;
  private SimulatedLoop sim;
  private EmbeddedChannel channel;

  @BeforeEach
  void setUp() throws Exception {
    open(Map.of());
  }

  /** Opens the connection with the base settings and {@code overrides}. */
  private void open(Map<String, String> overrides) throws Exception {
    metrics = new RelayMetrics(10, ByteBufAllocator.DEFAULT);
    fixture = IngressFixture.handlerOnly(IngressFixture.config(BASE, overrides), sender, metrics);
    sim = fixture.sim;
    channel = fixture.channel;
  }

  @AfterEach
  void tearDown() {
    fixture.lanes.close();
    assertTrue(sender.releasedBodies().isEmpty());
    assertFalse(channel.finishAndReleaseAll(), "nothing left unread or unreleased");
  }

  private FullHttpResponse exchange(FullHttpRequest req) {
    channel.writeInbound(req);
    sim.runDue();
    return channel.readOutbound();
  }

  /**
   * Sends an empty {@code method} request for {@code path}, asserts the answer's status, releases
   * the answer and returns its headers.
   */
  private HttpHeaders answered(int status, HttpMethod method, String path) {
    FullHttpResponse r = exchange(request(method, path, new byte[0]));
    try {
      assertEquals(status, r.status().code());
      return r.headers().copy();
    } finally {
      r.release();
    }
  }

  /**
   * Opens a new handler that trusts {@code X-Scope-OrgID} and writes two tenants' series under
   * {@code X-Scope-OrgID: team-x}, answered 204, with samples counted per tenant.
   */
  private void writeTwoTenantsTrustedAsTeamX() throws Exception {
    channel.finishAndReleaseAll();
    open(
        Map.of(
            "relay.tenant.trust-incoming-header", "true", "relay.metrics.count-samples", "true"));
    FullHttpResponse r = exchange(write(twoTenants(), "X-Scope-OrgID", "team-x"));
    assertEquals(204, r.status().code());
    r.release();
  }

  /** Sends a GET for {@code path}, asserts the answer's status and returns its body. */
  private String answeredText(int status, String path) {
    FullHttpResponse r = exchange(request(HttpMethod.GET, path, new byte[0]));
    assertEquals(status, r.status().code());
    return body(r);
  }

  /** One tenant, a, with two series. */
  private static byte[] twoTenantsBothA() throws Exception {
    return Snappy.compress(
        RawProto.cat(
            RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(1, 1)),
            RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(2, 1))));
  }

  private static byte[] twoTenants() throws Exception {
    return Snappy.compress(
        RawProto.cat(
            RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(1, 1)),
            RawProto.series(RawProto.label("service_id", "b"), RawProto.sample(1, 1))));
  }

  /** The status of an answer read off the channel, which is released. */
  private static int status(Object answer) {
    FullHttpResponse r = (FullHttpResponse) answer;
    try {
      return r.status().code();
    } finally {
      r.release();
    }
  }

  private static String body(FullHttpResponse r) {
    String s = r.content().toString(StandardCharsets.UTF_8);
    r.release();
    return s;
  }

  @Test
  void unknownPathIs404() {
    assertEquals("not found: /nope\n", answeredText(404, "/nope"));
    assertTrue(channel.isOpen(), "keep-alive after a 404");
  }

  @Test
  void wrongMethodIs405WithAllow() {
    assertEquals("POST", answered(405, HttpMethod.GET, "/api/v1/push").get(HttpHeaderNames.ALLOW));
    assertEquals(
        "GET, HEAD", answered(405, HttpMethod.POST, "/metrics").get(HttpHeaderNames.ALLOW));
  }

  @Test
  void healthReadinessAndMetrics() {
    answered(200, HttpMethod.GET, "/-/healthy");
    answered(200, HttpMethod.GET, "/-/ready?x=1");
    fixture.ingress.draining();
    assertEquals("not ready: shutting down\n", answeredText(503, "/-/ready"));
    assertFalse(channel.isOpen(), "while draining, answers close the connection");
  }

  @Test
  void metricsAreServedInPrometheusFormat() {
    exchange(request(HttpMethod.GET, "/nope", new byte[0])).release();
    FullHttpResponse m = exchange(request(HttpMethod.GET, "/metrics", new byte[0]));
    assertEquals(200, m.status().code());
    assertTrue(
        m.headers().get(HttpHeaderNames.CONTENT_TYPE).startsWith("text/plain; version=0.0.4"));
    String text = body(m);
    assertTrue(
        text.contains("relay_http_requests_total{endpoint=\"other\",status=\"404\"} 1.0"), text);
    assertTrue(text.contains("relay_inflight_requests"), text);
  }

  @Test
  void missingContentEncodingIs415AndCloses() {
    FullHttpResponse r =
        exchange(
            request(
                HttpMethod.POST,
                "/api/v1/write",
                new byte[] {1},
                "Content-Type",
                "application/x-protobuf"));
    assertEquals(415, r.status().code());
    assertEquals("close", r.headers().get(HttpHeaderNames.CONNECTION));
    assertEquals("Content-Encoding is required: snappy (or zstd)\n", body(r));
    assertFalse(channel.isOpen());
  }

  @Test
  void unsupportedEncodingOrTypeIs415() {
    FullHttpResponse gzip = exchange(write(new byte[] {1}, "Content-Encoding", "gzip"));
    assertEquals(415, gzip.status().code());
    assertTrue(body(gzip).contains("gzip"));
  }

  @Test
  void jsonContentTypeIs415() {
    FullHttpResponse r = exchange(write(new byte[] {1}, "Content-Type", "application/json"));
    assertEquals(415, r.status().code());
    assertTrue(body(r).contains("application/json"));
  }

  @Test
  void unknownProtoIs415NamingBothProtocols() {
    FullHttpResponse r =
        exchange(write(new byte[] {1}, "Content-Type", "application/x-protobuf;proto=foo.Request"));
    assertEquals(415, r.status().code());
    String body = body(r);
    assertTrue(body.contains("Remote Write 1.0") && body.contains("Remote Write 2.0"), body);
  }

  @Test
  void remoteWrite2BodyThatIsNotARequestIs400() {
    FullHttpResponse r =
        exchange(
            write(
                new byte[] {1},
                "Content-Type",
                "application/x-protobuf;proto=io.prometheus.write.v2.Request"));
    assertEquals(400, r.status().code());
    assertEquals("0", r.headers().get("X-Prometheus-Remote-Write-Samples-Written"));
    r.release();
  }

  @Test
  void contentLengthOverTheLimitIs413BeforeTheBodyIsRead() {
    FullHttpRequest req = write(new byte[10]);
    req.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 1001);
    FullHttpResponse r = exchange(req);
    assertEquals(413, r.status().code());
    assertTrue(body(r).contains("relay.server.max-request-bytes=1000"));
    assertFalse(channel.isOpen());
  }

  @Test
  void corruptSnappyIs400NamingTheProblem() {
    FullHttpResponse r = exchange(write(new byte[] {(byte) 0x80}));
    assertEquals(400, r.status().code());
    assertEquals("cannot decompress the snappy body: truncated snappy length preamble\n", body(r));
    assertTrue(channel.isOpen(), "a bad body was fully read: the connection stays usable");
  }

  @Test
  void decompressedSizeOverTheLimitIs400() throws Exception {
    FullHttpResponse r = exchange(write(Snappy.compress(new byte[5001])));
    assertEquals(400, r.status().code());
    assertTrue(body(r).contains("more than the limit of 5000"));
  }

  @Test
  void malformedProtobufIs400NamingFieldAndOffset() throws Exception {
    FullHttpResponse r = exchange(write(Snappy.compress(new byte[] {0x0A, 0x05, 0x01})));
    assertEquals(400, r.status().code());
    assertEquals(
        "malformed request at byte 1 in timeseries[0]: length 5 exceeds the 1 bytes left\n",
        body(r));
  }

  @Test
  void seriesWithoutTenantUnderRejectIs400() throws Exception {
    byte[] request = RawProto.series(RawProto.label("job", "x"), RawProto.sample(1, 1));
    FullHttpResponse r = exchange(write(Snappy.compress(request)));
    assertEquals(400, r.status().code());
    assertTrue(body(r).contains("series without a valid tenant at byte 0 in timeseries[0]"));
  }

  @Test
  void pipelinedRequestsAreAnsweredInOrder() {
    channel.writeInbound(
        request(HttpMethod.GET, "/nope", new byte[0]),
        request(HttpMethod.GET, "/-/healthy", new byte[0]),
        write(new byte[] {(byte) 0x80}));
    FullHttpResponse first = channel.readOutbound();
    FullHttpResponse second = channel.readOutbound();
    FullHttpResponse third = channel.readOutbound();
    assertEquals(404, first.status().code());
    assertEquals(200, second.status().code());
    assertEquals(400, third.status().code());
    first.release();
    second.release();
    third.release();
    assertNull(channel.readOutbound());
  }

  @Test
  void requestsPastThePipeliningBoundAreRefusedAndNothingAfterThemIsRead() throws Exception {
    sender.script("b", Reply.status(200).after(Duration.ofMillis(500)));
    List<Object> inbound = new ArrayList<>();
    inbound.add(write(twoTenants()));
    for (int i = 0; i < IngressHandler.MAX_PIPELINED + 5; i++) {
      inbound.add(request(HttpMethod.GET, "/-/healthy", new byte[0]));
    }
    inbound.add(write(twoTenants()));
    channel.writeInbound(inbound.toArray());
    sim.runDue();
    assertNull(channel.readOutbound(), "the write is still being delivered");
    sim.advance(Duration.ofMillis(500));
    assertEquals(204, status(channel.readOutbound()));
    for (int i = 0; i < IngressHandler.MAX_PIPELINED; i++) {
      assertEquals(200, status(channel.readOutbound()), "pipelined request " + i);
    }
    FullHttpResponse refused = channel.readOutbound();
    assertEquals(503, refused.status().code());
    assertEquals("close", refused.headers().get(HttpHeaderNames.CONNECTION));
    assertTrue(body(refused).contains("more than 16 requests sent ahead of their answers"));
    assertNull(channel.readOutbound(), "nothing after the refused request is answered");
    assertFalse(channel.isOpen());
    assertEquals(2, sender.calls().size(), "only the first write was delivered (to a and b)");
  }

  @Test
  void http10WithoutKeepAliveIsClosedAfterTheAnswer() {
    FullHttpRequest req =
        new DefaultFullHttpRequest(
            HttpVersion.HTTP_1_0, HttpMethod.GET, "/-/healthy", Unpooled.EMPTY_BUFFER);
    FullHttpResponse r = exchange(req);
    assertEquals(200, r.status().code());
    r.release();
    assertFalse(channel.isOpen());
  }

  @Test
  void writeDeliveredToEveryTenantIs204() throws Exception {
    FullHttpResponse r = exchange(write(twoTenants()));
    assertEquals(204, r.status().code());
    r.release();
    assertEquals(List.of(0L), sender.callMillis("a"));
    assertEquals(List.of(0L), sender.callMillis("b"));
    assertTrue(channel.isOpen());
  }

  @Test
  void answerWaitsForTheSlowestTenant() throws Exception {
    sender.script("b", Reply.status(200).after(Duration.ofMillis(800)));
    channel.writeInbound(write(twoTenants()));
    sim.advance(Duration.ofMillis(799));
    assertNull(channel.readOutbound(), "not answered while b is in flight");
    sim.advance(Duration.ofMillis(1));
    FullHttpResponse r = channel.readOutbound();
    assertEquals(204, r.status().code());
    r.release();
  }

  @Test
  void tenantsOverTheirLimitGet429WithTheLargestRetryAfter() throws Exception {
    sender.script("a", Reply.retryAfter(429, Duration.ofSeconds(30)));
    sender.script("b", Reply.retryAfter(429, Duration.ofSeconds(7)));
    FullHttpResponse r = exchange(write(twoTenants()));
    assertEquals(429, r.status().code());
    assertEquals("30", r.headers().get(HttpHeaderNames.RETRY_AFTER));
    assertTrue(body(r).startsWith("0 of 2 tenant batches accepted downstream"));
    assertTrue(channel.isOpen(), "a delivery failure keeps the connection");
  }

  @Test
  void aBodyThrottledTooOftenIsAnswered400NamingTheThrottledTenantAndCounted() throws Exception {
    open(Map.of("relay.delivery.throttled.retries", "2"));
    sender.repeat("b", Reply.status(429, "ingestion rate limit exceeded"), 10);
    byte[] body = twoTenants();
    assertEquals(429, status(exchange(write(body))), "first attempt");
    assertEquals(429, status(exchange(write(body))), "second attempt");
    FullHttpResponse third = exchange(write(body));
    assertEquals(400, third.status().code());
    String text = body(third);
    assertTrue(
        text.startsWith(
            "1 of 2 tenant batches accepted downstream; the batches of tenants over their"
                + " downstream limit were dropped after 2 answers of 429 to this request"),
        text);
    assertTrue(text.contains("tenant b (1 series"), text);
    assertTrue(text.contains("ingestion rate limit exceeded"), text);
    assertEquals(
        1,
        sender.calls().stream().filter(c -> c.tenant().equals("a")).count(),
        "a was delivered once, by the first attempt");
    assertTrue(
        metrics
            .scrape()
            .contains("relay_tenant_series_dropped_total{reason=\"throttled\",tenant=\"b\"} 1.0"),
        metrics.scrape());
    assertEquals(429, status(exchange(write(body))), "a new attempt of the body starts anew");
  }

  @Test
  void aBodyFirstThrottledLongerAgoThanTheRetryTimeIsAnswered400AtItsNextThrottledAttempt()
      throws Exception {
    sender.repeat("a", Reply.status(429, "over limit"), 10);
    byte[] body = twoTenantsBothA();
    assertEquals(429, status(exchange(write(body))));
    sim.advance(Duration.ofSeconds(5));
    assertEquals(400, status(exchange(write(body))), "one 429, but 5 s ago");
  }

  @Test
  void underTheStrictPolicyAThrottledBodyIsAnswered429ForEver() throws Exception {
    open(Map.of("relay.delivery.throttled.policy", "strict"));
    sender.repeat("b", Reply.status(429, "ingestion rate limit exceeded"), 10);
    byte[] body = twoTenants();
    for (int i = 0; i < 5; i++) {
      assertEquals(429, status(exchange(write(body))), "attempt " + i);
    }
  }

  @Test
  void retriableFailureAtTheDeadlineIs503NamingTheTenant() throws Exception {
    sender.repeat("a", Reply.status(500, "ingester down"), 100);
    sender.script("b", Reply.status(400, "bad labels"));
    channel.writeInbound(write(twoTenants()));
    sim.advance(Duration.ofSeconds(2));
    FullHttpResponse r = channel.readOutbound();
    assertEquals(503, r.status().code());
    String text = body(r);
    assertTrue(text.contains("tenant a"), text);
    assertTrue(text.contains("ingester down"), text);
    assertTrue(text.contains("tenant b") && text.contains("bad labels"), text);
    assertTrue(sender.callMillis("a").size() > 1, "retried");
    assertTrue(
        metrics.scrape().contains("relay_requests_total{status=\"503\"} 1.0"),
        "answered requests are counted");
  }

  @Test
  void aRetryOfTheSameBodySendsOnlyTheTenantsNotYetDelivered() throws Exception {
    sender.script("b", Reply.status(503, "ingester down").after(Duration.ZERO));
    sender.repeat("b", Reply.status(503, "ingester down"), 2);
    byte[] body = twoTenants();
    channel.writeInbound(write(body));
    sim.advance(Duration.ofSeconds(2));
    FullHttpResponse first = channel.readOutbound();
    assertEquals(503, first.status().code());
    first.release();
    assertEquals(1, sender.callMillis("a").size());
    sim.advance(Duration.ofSeconds(5));
    FullHttpResponse retry = exchange(write(body));
    assertEquals(204, retry.status().code(), "b is accepted now; a was delivered before");
    retry.release();
    assertEquals(1, sender.callMillis("a").size(), "a is not sent again");
    assertTrue(
        metrics.scrape().contains("relay_ledger_skipped_series_total 1.0"), metrics.scrape());
    byte[] newer =
        Snappy.compress(
            RawProto.cat(
                RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(2, 2)),
                RawProto.series(RawProto.label("service_id", "b"), RawProto.sample(2, 2))));
    FullHttpResponse other = exchange(write(newer));
    other.release();
    assertEquals(2, sender.callMillis("a").size(), "a new body is sent whole");
  }

  /** An allocator whose heap buffers fail with {@code failure} once {@code allowed} were made. */
  private static ByteBufAllocator failingAfter(int allowed, Supplier<Throwable> failure) {
    return new AbstractByteBufAllocator(false) {
      private int left = allowed;

      @Override
      protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
        if (left-- <= 0) {
          Throwable t = failure.get();
          if (t instanceof Error e) {
            throw e;
          }
          throw (RuntimeException) t;
        }
        return new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
      }

      @Override
      protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
        return new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity);
      }

      @Override
      public boolean isDirectBufferPooled() {
        return false;
      }
    };
  }

  @Test
  void aFailureInsideTheRelayIsAnswered500ReleasesEverythingAndKeepsServing() throws Exception {
    channel.config().setAllocator(failingAfter(1, () -> new IllegalStateException("injected")));
    FullHttpResponse r = exchange(write(twoTenants()));
    assertEquals(500, r.status().code());
    assertEquals("internal error while processing the request", body(r).strip());
    assertEquals(0, metrics.inFlight(), "the request is no longer counted in flight");
    assertTrue(metrics.scrape().contains("relay_internal_errors_total{kind=\"exception\"} 1.0"));
    channel.config().setAllocator(ByteBufAllocator.DEFAULT);
    FullHttpResponse next = exchange(write(twoTenants()));
    assertEquals(204, next.status().code(), "the connection keeps serving");
    next.release();
  }

  @Test
  void runningOutOfMemoryIsAnswered503WithRetryAfter() throws Exception {
    channel
        .config()
        .setAllocator(failingAfter(0, () -> new OutOfMemoryError("injected: no memory")));
    FullHttpResponse r = exchange(write(twoTenants()));
    assertEquals(503, r.status().code());
    assertEquals("5", r.headers().get(HttpHeaderNames.RETRY_AFTER));
    r.release();
    assertEquals(0, metrics.inFlight());
    assertTrue(metrics.scrape().contains("relay_internal_errors_total{kind=\"memory\"} 1.0"));
  }

  @Test
  void onlyRejectionsAre400() throws Exception {
    sender.script("b", Reply.status(415, "unsupported"));
    FullHttpResponse r = exchange(write(twoTenants()));
    assertEquals(400, r.status().code());
    assertTrue(body(r).contains("tenant b (1 series, 1 attempt): downstream answered 415"));
  }

  @Test
  void transportFailureIsRetriedWithinTheRequest() throws Exception {
    sender.script("a", new Reply(AttemptOutcome.transport("connection reset"), Duration.ZERO));
    channel.writeInbound(write(twoTenants()));
    sim.advance(Duration.ofSeconds(1));
    FullHttpResponse r = channel.readOutbound();
    assertEquals(204, r.status().code());
    r.release();
    assertEquals(2, sender.callMillis("a").size());
  }

  @Test
  void requestWithoutAnyRoutableSeriesIsAcceptedWithoutDownstreamCalls() throws Exception {
    channel.finishAndReleaseAll();
    open(Map.of("relay.tenant.missing", "drop"));
    byte[] request = RawProto.series(RawProto.label("job", "x"), RawProto.sample(1, 1));
    FullHttpResponse r = exchange(write(Snappy.compress(request)));
    assertEquals(204, r.status().code());
    r.release();
    assertTrue(sender.calls().isEmpty());
  }

  @Test
  void trustedTenantHeaderSendsTheWholeRequestToItsTenant() throws Exception {
    writeTwoTenantsTrustedAsTeamX();
    assertEquals(List.of("team-x"), sender.calls().stream().map(c -> c.tenant()).toList());
    FullHttpResponse bad = exchange(write(twoTenants(), "X-Scope-OrgID", "a|b"));
    assertEquals(400, bad.status().code());
    assertTrue(body(bad).contains("the X-Scope-OrgID header is not a valid tenant ID"));
  }

  @Test
  void requestTakenWholeUnderTheTrustedHeaderCountsItsSeriesAndSamples() throws Exception {
    writeTwoTenantsTrustedAsTeamX();
    String text = metrics.scrape();
    assertTrue(text.contains("relay_tenant_series_in_total{tenant=\"team-x\"} 2.0"), text);
    assertTrue(text.contains("relay_tenant_samples_in_total{tenant=\"team-x\"} 2.0"), text);
  }

  @Test
  void malformedRequestUnderTheTrustedHeaderIs400AndSendsNothing() throws Exception {
    channel.finishAndReleaseAll();
    open(Map.of("relay.tenant.trust-incoming-header", "true"));
    FullHttpResponse r =
        exchange(
            write(
                Snappy.compress(RawProto.bytes(0x0A, 0x05, 0x01, 0x02)),
                "X-Scope-OrgID",
                "team-x"));
    assertEquals(400, r.status().code());
    assertEquals(
        "malformed request at byte 1 in timeseries[0]: length 5 exceeds the 2 bytes left\n",
        body(r));
    assertTrue(sender.calls().isEmpty());
  }

  @Test
  void bodyNotReceivedWithinTheReadTimeoutIs408AndCloses() {
    HttpRequest head =
        new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/api/v1/write");
    head.headers().set("Content-Encoding", "snappy").setInt(HttpHeaderNames.CONTENT_LENGTH, 100);
    channel.writeInbound(head, new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[10])));
    trickle(29);
    assertNull(channel.readOutbound());
    sim.advance(Duration.ofSeconds(1));
    FullHttpResponse r = channel.readOutbound();
    assertEquals(408, r.status().code());
    assertEquals("request body not received within relay.server.read-timeout=PT30S\n", body(r));
    assertFalse(channel.isOpen());
  }

  /** Sends a byte of the body every 5 s (within the stall timeout) for {@code seconds}. */
  private void trickle(int seconds) {
    for (int s = 0; s < seconds; s++) {
      sim.advance(Duration.ofSeconds(1));
      if (s % 5 == 4) {
        channel.writeInbound(new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[1])));
      }
    }
  }

  @Test
  void aBodyWithoutBytesForTheStallTimeoutIs408AndCloses() {
    HttpRequest head =
        new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/api/v1/write");
    head.headers().set("Content-Encoding", "snappy").setInt(HttpHeaderNames.CONTENT_LENGTH, 100);
    channel.writeInbound(head, new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[10])));
    sim.advance(Duration.ofMillis(9_900));
    channel.writeInbound(new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[10])));
    sim.advance(Duration.ofMillis(9_900));
    assertNull(channel.readOutbound(), "bytes came 9.9 s apart: not stalled");
    sim.advance(Duration.ofMillis(100));
    FullHttpResponse r = channel.readOutbound();
    assertEquals(408, r.status().code());
    assertEquals(
        "request body stalled: no bytes of it within relay.server.body-stall-timeout=PT10S\n",
        body(r));
    assertFalse(channel.isOpen());
  }

  @Test
  void aBodyBegunAfterAnEarlierRequestStillHasTheWholeReadTimeout() throws Exception {
    FullHttpResponse first = exchange(write(twoTenants()));
    assertEquals(204, first.status().code());
    first.release();
    sim.advance(Duration.ofSeconds(20));
    HttpRequest head =
        new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/api/v1/write");
    head.headers().set("Content-Encoding", "snappy").setInt(HttpHeaderNames.CONTENT_LENGTH, 100);
    channel.writeInbound(head, new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[10])));
    // The timer the first request armed comes due 10 s into this body's 30: it waits on.
    trickle(29);
    assertNull(channel.readOutbound());
    assertTrue(channel.isOpen());
    sim.advance(Duration.ofSeconds(1));
    FullHttpResponse r = channel.readOutbound();
    assertEquals(408, r.status().code());
    r.release();
    assertFalse(channel.isOpen());
  }

  @Test
  void headRequestGetsHeadersWithoutBody() {
    FullHttpResponse r = exchange(request(HttpMethod.HEAD, "/-/healthy", new byte[0]));
    assertEquals(200, r.status().code());
    assertEquals("3", r.headers().get(HttpHeaderNames.CONTENT_LENGTH));
    assertEquals("", body(r));
    FullHttpResponse missing = exchange(request(HttpMethod.HEAD, "/nope", new byte[0]));
    assertEquals(404, missing.status().code());
    assertEquals("", body(missing));
  }
}
