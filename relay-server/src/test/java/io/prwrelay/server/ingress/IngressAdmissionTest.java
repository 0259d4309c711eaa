package io.prwrelay.server.ingress;

import static io.prwrelay.server.ingress.TestRequests.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.testing.RawProto;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * What a write request must pass before its body is read, on {@link EmbeddedChannel}s with
 * simulated time: the memory budget (503, released exactly once on every path), {@code Expect:
 * 100-continue}, inbound auth (401 before the body, 403 for a tenant the credential may not write)
 * and which admin endpoints stay open.
 */
class IngressAdmissionTest {
  private static final Map<String, String> BASE =
      Map.of(
          "relay.server.max-request-bytes", "1000",
          "relay.server.max-inflight-bytes", "1500",
          "relay.tenant.missing", "reject",
          "relay.downstream.timeout", "2s",
          "relay.downstream.attempt-timeout", "1s");

  @TempDir Path dir;

  private final ScriptedSender sender = new ScriptedSender();
  private final List<EmbeddedChannel> channels = new ArrayList<>();
  private RelayMetrics metrics;
  private IngressFixture fixture;
  private SimulatedLoop sim;
  private EmbeddedChannel channel;

  /** Starts the ingress with the base settings and {@code overrides}; opens one connection. */
  private void open(Map<String, String> overrides) throws Exception {
    metrics = new RelayMetrics(10, ByteBufAllocator.DEFAULT);
    fixture = IngressFixture.handlerOnly(IngressFixture.config(BASE, overrides), sender, metrics);
    sim = fixture.sim;
    channel = fixture.channel;
    channels.add(channel);
  }

  /** Another connection to the same ingress. */
  private EmbeddedChannel another() {
    EmbeddedChannel c = new EmbeddedChannel(fixture.ingress.newHandler());
    channels.add(c);
    return c;
  }

  @AfterEach
  void tearDown() {
    if (fixture != null) {
      fixture.lanes.close();
    }
    assertTrue(sender.releasedBodies().isEmpty());
    for (EmbeddedChannel c : channels) {
      assertFalse(c.finishAndReleaseAll(), "nothing left unread or unreleased");
    }
  }

  private static byte[] twoTenants() throws Exception {
    return Snappy.compress(
        RawProto.cat(
            RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(1, 1)),
            RawProto.series(RawProto.label("service_id", "b"), RawProto.sample(1, 1))));
  }

  /** The head of a write request declaring {@code length} body bytes (-1: chunked). */
  private static HttpRequest head(long length, String... headers) {
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/api/v1/write");
    r.headers().set("Content-Encoding", "snappy").set("Content-Type", "application/x-protobuf");
    if (length >= 0) {
      r.headers().set(HttpHeaderNames.CONTENT_LENGTH, length);
    } else {
      r.headers().set(HttpHeaderNames.TRANSFER_ENCODING, "chunked");
    }
    for (int i = 0; i < headers.length; i += 2) {
      r.headers().set(headers[i], headers[i + 1]);
    }
    return r;
  }

  private static FullHttpRequest get(String path, String... headers) {
    FullHttpRequest r =
        new DefaultFullHttpRequest(
            HttpVersion.HTTP_1_1, HttpMethod.GET, path, Unpooled.EMPTY_BUFFER);
    for (int i = 0; i < headers.length; i += 2) {
      r.headers().set(headers[i], headers[i + 1]);
    }
    return r;
  }

  private FullHttpResponse exchange(FullHttpRequest req) {
    channel.writeInbound(req);
    sim.runDue();
    return channel.readOutbound();
  }

  private static int status(FullHttpResponse r) {
    int s = r.status().code();
    r.release();
    return s;
  }

  /**
   * Opens a handler with a bearer token file holding {@code before}, then writes {@code after} into
   * the file and has the handler read its changed files again.
   */
  private void reloadTokenFile(String before, String after) throws Exception {
    Path tokens = dir.resolve("tokens");
    Files.writeString(tokens, before);
    open(Map.of("relay.server.bearer-token-file", tokens.toString()));
    Files.writeString(tokens, after);
    fixture.ingress.reloadChangedFiles();
  }

  /** The status of the answer to a write of two tenants with {@code Authorization: value}. */
  private int statusWithAuthorization(String value) throws Exception {
    return status(exchange(write(twoTenants(), "Authorization", value)));
  }

  private static String body(FullHttpResponse r) {
    String s = r.content().toString(StandardCharsets.UTF_8);
    r.release();
    return s;
  }

  private long budgetInUse() {
    return fixture.ingress.budget.inUse();
  }

  private static String basic(String user, String password) {
    return "Basic "
        + Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
  }

  // ---- memory budget

  @Test
  void aRequestOverTheBudgetIs503WithRetryAfterBeforeItsBodyIsRead() throws Exception {
    open(Map.of());
    EmbeddedChannel first = another();
    first.writeInbound(head(1000), new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[10])));
    assertEquals(1000, budgetInUse(), "its first buffer: the whole body, under 64 KiB");
    FullHttpResponse r = exchange(write(new byte[600]));
    assertEquals(503, r.status().code());
    assertEquals("5", r.headers().get(HttpHeaderNames.RETRY_AFTER));
    assertEquals("close", r.headers().get(HttpHeaderNames.CONNECTION));
    assertTrue(body(r).contains("relay.server.max-inflight-bytes=1500"));
    assertFalse(channel.isOpen(), "the unread body ends the connection");
    assertEquals(1000, budgetInUse(), "a refused request holds nothing");
    assertTrue(
        metrics.scrape().contains("relay_inflight_rejected_total{reason=\"total\"} 1.0"),
        metrics.scrape());
    first.close();
    assertEquals(0, budgetInUse(), "a connection closed mid-body releases its reservation");
  }

  @Test
  void aDeclaredBodyHoldsWhatItReceivedAndAStallReturnsIt() throws Exception {
    open(
        Map.of(
            "relay.server.max-request-bytes", "1000000",
            "relay.server.max-inflight-bytes", "2000000"));
    channel.writeInbound(head(1_000_000));
    assertEquals(64 * 1024, budgetInUse(), "a declaration holds the first buffer only");
    channel.writeInbound(new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[100_000])));
    assertEquals(128 * 1024, budgetInUse(), "the buffer the bytes received need");
    channel.writeInbound(new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[500_000])));
    assertEquals(1_000_000, budgetInUse(), "at most the declared length");
    sim.advance(Duration.ofSeconds(10));
    FullHttpResponse r = channel.readOutbound();
    assertEquals(408, r.status().code());
    assertEquals(
        "request body stalled: no bytes of it within relay.server.body-stall-timeout=PT10S\n",
        body(r));
    assertEquals(0, budgetInUse(), "the stalled body's reservation returned");
  }

  @Test
  void aSmallRequestStillFitsBesideALargeStalledOne() throws Exception {
    open(Map.of());
    EmbeddedChannel stalled = another();
    stalled.writeInbound(head(1000));
    FullHttpResponse r = exchange(write(twoTenants()));
    assertEquals(204, r.status().code());
    r.release();
    assertEquals(1000, budgetInUse(), "the answered request gave its bytes back");
    stalled.close();
    assertEquals(0, budgetInUse());
  }

  @Test
  void theBudgetIsHeldUntilTheAnswerAndReleasedOnce() throws Exception {
    open(Map.of());
    sender.script("b", ScriptedSender.Reply.status(200).after(Duration.ofMillis(500)));
    byte[] body = twoTenants();
    channel.writeInbound(write(body));
    sim.runDue();
    assertNull(channel.readOutbound(), "b is still in flight");
    // Two tenants' PRW 1.0 batches: every series spliced once, as many bytes as the request, the
    // "as much again" of the sizing rule: nothing beyond the request is reserved for them.
    assertEquals(
        body.length + (long) Snappy.uncompressedLength(body),
        budgetInUse(),
        "the body and what it decompresses to are held while it is delivered");
    sim.advance(Duration.ofMillis(500));
    assertEquals(204, status(channel.readOutbound()));
    assertEquals(0, budgetInUse());
    assertTrue(metrics.scrape().contains("relay_inflight_body_bytes 0.0"), metrics.scrape());
    channel.close();
    assertEquals(0, budgetInUse(), "closing afterwards releases nothing twice");
  }

  @Test
  void aChunkedBodyIsAdmittedAtTheLargestSizeItMayReach() throws Exception {
    open(Map.of());
    channel.writeInbound(head(-1));
    assertEquals(1000, budgetInUse());
    byte[] body = twoTenants();
    channel.writeInbound(new DefaultLastHttpContent(Unpooled.wrappedBuffer(body)));
    sim.runDue();
    assertEquals(204, status(channel.readOutbound()));
    assertEquals(0, budgetInUse());
  }

  @Test
  void aSlowBodyStillEndsIn408AndReleasesItsReservation() throws Exception {
    open(Map.of());
    channel.writeInbound(head(500), new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[10])));
    assertEquals(500, budgetInUse());
    sim.advance(Duration.ofSeconds(30));
    assertEquals(408, status(channel.readOutbound()));
    assertEquals(0, budgetInUse());
  }

  @Test
  void aBodyOverTheCapReleasesItsReservation() throws Exception {
    open(Map.of());
    channel.writeInbound(head(-1));
    channel.writeInbound(new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[1001])));
    assertEquals(413, status(channel.readOutbound()));
    assertEquals(0, budgetInUse());
  }

  @Test
  void eachCredentialHoldsItsOwnShareOfTheBudget() throws Exception {
    Path tokens = dir.resolve("tokens");
    Files.writeString(tokens, "tok-a\ntok-b\n");
    open(Map.of("relay.server.bearer-token-file", tokens.toString()));
    // The budget is 1500 bytes, a sender's share 1000 (one largest request).
    another().writeInbound(head(1000, "Authorization", "Bearer tok-a"));
    assertEquals(1000, budgetInUse());
    EmbeddedChannel sameSender = another();
    sameSender.writeInbound(head(400, "Authorization", "Bearer tok-a"));
    FullHttpResponse refused = sameSender.readOutbound();
    assertEquals(503, refused.status().code());
    assertTrue(body(refused).contains("this client's share"));
    EmbeddedChannel otherSender = another();
    otherSender.writeInbound(head(400, "Authorization", "Bearer tok-b"));
    assertNull(otherSender.readOutbound(), "admitted: another credential is another sender");
    assertEquals(1400, budgetInUse());
    for (EmbeddedChannel c : channels) {
      c.close();
    }
    assertEquals(0, budgetInUse());
  }

  // ---- Expect: 100-continue

  @Test
  void expectContinueWithinTheBudgetGets100ContinueThenTheAnswer() throws Exception {
    open(Map.of());
    byte[] body = twoTenants();
    channel.writeInbound(head(body.length, "Expect", "100-continue"));
    assertEquals(100, status(channel.readOutbound()));
    channel.writeInbound(new DefaultLastHttpContent(Unpooled.wrappedBuffer(body)));
    sim.runDue();
    assertEquals(204, status(channel.readOutbound()));
  }

  @Test
  void expectContinueWithAnOversizeLengthGets413AndNo100Continue() throws Exception {
    open(Map.of());
    channel.writeInbound(head(5000, "Expect", "100-continue"));
    assertEquals(413, status(channel.readOutbound()));
    assertNull(channel.readOutbound());
    assertEquals(0, budgetInUse());
  }

  @Test
  void expectContinueOverTheBudgetGets503AndNo100Continue() throws Exception {
    open(Map.of());
    another().writeInbound(head(1000));
    channel.writeInbound(head(800, "Expect", "100-continue"));
    assertEquals(503, status(channel.readOutbound()));
    assertNull(channel.readOutbound());
  }

  // ---- inbound auth

  @Test
  void withoutCredentialsAWriteIs401WithAChallengeAndItsBodyIsNotRead() throws Exception {
    open(
        Map.of(
            "relay.server.basic-auth.username", "prom",
            "relay.server.basic-auth.password", "s3cret"));
    channel.writeInbound(head(500), new DefaultHttpContent(Unpooled.wrappedBuffer(new byte[10])));
    FullHttpResponse r = channel.readOutbound();
    assertEquals(401, r.status().code());
    assertEquals(
        List.of("Basic realm=\"prw-relay\""), r.headers().getAll(HttpHeaderNames.WWW_AUTHENTICATE));
    assertEquals("unauthorized\n", body(r));
    assertFalse(channel.isOpen());
    assertEquals(0, budgetInUse(), "nothing was admitted");
    assertTrue(sender.calls().isEmpty());
    assertTrue(metrics.scrape().contains("relay_auth_rejected_total{status=\"401\"} 1.0"));
  }

  @Test
  void basicAuthWithTheRightPasswordWritesAndAWrongOneIs401() throws Exception {
    open(
        Map.of(
            "relay.server.basic-auth.username", "prom",
            "relay.server.basic-auth.password", "s3cret"));
    assertEquals(204, statusWithAuthorization(basic("prom", "s3cret")));
    assertEquals(401, statusWithAuthorization(basic("prom", "s3cres")));
  }

  @Test
  void aBasicAuthPasswordIsReadFromItsFile() throws Exception {
    Path file = dir.resolve("password");
    Files.writeString(file, "from-file\n");
    open(
        Map.of(
            "relay.server.basic-auth.username",
            "prom",
            "relay.server.basic-auth.password-file",
            file.toString()));
    assertEquals(204, statusWithAuthorization(basic("prom", "from-file")));
  }

  @Test
  void aBearerTokenFromTheFileWritesOnlyItsTenants() throws Exception {
    Path tokens = dir.resolve("tokens");
    Files.writeString(tokens, "# sender tokens\nall-tenants\n\nonly-a a,c\n");
    open(Map.of("relay.server.bearer-token-file", tokens.toString()));
    assertEquals(204, statusWithAuthorization("Bearer all-tenants"));
    assertEquals(2, sender.calls().size());
    FullHttpResponse forbidden = exchange(write(twoTenants(), "Authorization", "Bearer only-a"));
    assertEquals(403, forbidden.status().code());
    assertEquals("the credentials presented may not write tenant b\n", body(forbidden));
    assertEquals(2, sender.calls().size(), "nothing of the refused request was delivered");
    assertTrue(channel.isOpen(), "the body was read: the connection stays usable");
    byte[] onlyA =
        Snappy.compress(RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(1, 1)));
    assertEquals(204, status(exchange(write(onlyA, "Authorization", "Bearer only-a"))));
    assertEquals(401, status(exchange(write(onlyA, "Authorization", "Bearer not-a-token"))));
    String scrape = metrics.scrape();
    assertTrue(scrape.contains("relay_auth_rejected_total{status=\"403\"} 1.0"), scrape);
    assertTrue(
        scrape.contains("relay_series_rejected_total{reason=\"forbidden_tenant\"} 2.0"), scrape);
  }

  @Test
  void aChangedTokenFileIsUsedAfterItIsReRead() throws Exception {
    reloadTokenFile("old-token\n", "new-token-longer\n");
    assertEquals(204, statusWithAuthorization("Bearer new-token-longer"));
    assertEquals(401, statusWithAuthorization("Bearer old-token"));
    assertTrue(
        metrics
            .scrape()
            .contains("relay_reloads_total{file=\"bearer-token-file\",result=\"success\"} 1.0"));
  }

  @Test
  void aBrokenTokenFileKeepsThePreviousTokens() throws Exception {
    reloadTokenFile("good-token\n", "one two three\n");
    assertEquals(204, statusWithAuthorization("Bearer good-token"));
    assertTrue(
        metrics
            .scrape()
            .contains("relay_reloads_total{file=\"bearer-token-file\",result=\"failure\"} 1.0"));
  }

  @Test
  void adminEndpointsStayOpenUnlessMetricsAreProtected() throws Exception {
    open(Map.of("relay.server.bearer-token", "tok"));
    assertEquals(200, status(exchange(get("/metrics"))));
    assertEquals(200, status(exchange(get("/-/healthy"))));
    channel.finishAndReleaseAll();
    fixture.lanes.close();
    open(Map.of("relay.server.bearer-token", "tok", "relay.server.auth.protect-metrics", "true"));
    assertEquals(200, status(exchange(get("/-/ready"))));
    assertEquals(200, status(exchange(get("/metrics", "Authorization", "Bearer tok"))));
    FullHttpResponse denied = exchange(get("/metrics"));
    assertEquals(401, denied.status().code());
    assertEquals(
        "Bearer realm=\"prw-relay\"", denied.headers().get(HttpHeaderNames.WWW_AUTHENTICATE));
    denied.release();
  }
}
