package io.prwrelay.server.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.testing.RawProto;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

/**
 * {@link WriteProcessor#process} owns the compressed body: on every way out (a refusal by any
 * stage, nothing to deliver, delivered split or forwarded whole, retried with the ledger, a failure
 * inside the relay) it releases the body exactly once, before the sender is answered, answers
 * exactly once, and leaves nothing it made of the body unreleased. The test keeps a reference of
 * its own to each body, so a body released twice or not at all shows in its reference count.
 */
class WriteProcessorTest {
  private static final Map<String, String> BASE =
      Map.of(
          "relay.tenant.missing", "drop",
          "relay.downstream.timeout", "2s",
          "relay.downstream.attempt-timeout", "1s");

  private final ScriptedSender sender = new ScriptedSender();
  private final RelayMetrics metrics = new RelayMetrics(10, ByteBufAllocator.DEFAULT);
  private WriteFixture fixture;
  private SimulatedLoop sim;

  @BeforeEach
  void setUp() throws Exception {
    fixture = new WriteFixture(WriteFixture.config(BASE, Map.of()), sender, metrics);
    sim = fixture.sim;
  }

  @AfterEach
  void tearDown() {
    fixture.lanes.close();
    assertEquals(0, fixture.budget.inUse(), "every reservation returned");
    assertFalse(fixture.channel.finishAndReleaseAll());
  }

  /** What {@link #process} saw: the answers, and the body's reference count at each. */
  private record Processed(List<Answer> answers, List<Integer> bodyRefCnts) {
    Answer only() {
      assertEquals(1, answers.size(), "answered exactly once: " + answers);
      assertEquals(
          List.of(1), bodyRefCnts, "the body was released once, before the sender was answered");
      return answers.get(0);
    }
  }

  /**
   * Processes a snappy PRW 1.0 body as the ingress would, with {@code alloc} for what the relay
   * allocates for it, and runs the loop for {@code wait}. Then checks that the test's own reference
   * to the body is the last one left (and releases it) and that every buffer {@code alloc} made
   * (the decompressed request, the batches) was released.
   */
  private Processed process(
      byte[] snappy, TenantAllowList allowed, TrackingAllocator alloc, Duration wait) {
    ByteBuf body = Unpooled.copiedBuffer(snappy);
    body.retain(); // the test's own reference
    InflightBudget budget = fixture.budget;
    InflightBudget.Reservation reservation = budget.admit(null, body.readableBytes()).reservation();
    List<Answer> answers = new ArrayList<>();
    List<Integer> refCnts = new ArrayList<>();
    fixture.processor.process(
        new WriteInput(
            sim.loop(),
            alloc,
            body,
            reservation,
            new WriteHead(BodyEncoding.SNAPPY, Protocol.V1, null, 0),
            allowed,
            SenderKey.UNKNOWN,
            sim.now()),
        a -> {
          answers.add(a);
          refCnts.add(body.refCnt());
          reservation.release();
        });
    sim.advance(wait);
    assertEquals(1, body.refCnt(), "only the test's own reference is left");
    body.release();
    alloc.assertAllReleased();
    return new Processed(answers, refCnts);
  }

  private Answer process(byte[] snappy) {
    return process(snappy, TenantAllowList.ANY, new TrackingAllocator(), Duration.ZERO).only();
  }

  private static byte[] series(String tenant) {
    return RawProto.series(RawProto.label("service_id", tenant), RawProto.sample(1, 1));
  }

  private static byte[] snappy(byte[]... series) throws Exception {
    return Snappy.compress(RawProto.cat(series));
  }

  @Test
  void aBodyThatDoesNotDecompressIsReleasedOnceBeforeIts400() {
    Answer a = process(new byte[] {(byte) 0x80});
    assertEquals(400, a.status());
    assertEquals(
        "cannot decompress the snappy body: truncated snappy length preamble", a.message());
  }

  @Test
  void aMalformedRequestIsReleasedOnceBeforeIts400() throws Exception {
    Answer a = process(snappy(series("a"), new byte[] {0x0A, 0x7F, 0x01}));
    assertEquals(400, a.status());
    assertEquals(
        "malformed request at byte 33 in timeseries[1]: length 127 exceeds the 1 bytes left",
        a.message());
    assertTrue(sender.calls().isEmpty());
  }

  @Test
  void aForbiddenTenantIsReleasedOnceBeforeIts403() throws Exception {
    Answer a =
        process(
                snappy(series("a"), series("b")),
                TenantAllowList.of(List.of("a")),
                new TrackingAllocator(),
                Duration.ZERO)
            .only();
    assertEquals(403, a.status());
    assertTrue(sender.calls().isEmpty(), "nothing of the request is delivered");
  }

  @Test
  void aRequestWithNothingToDeliverIsAnswered204AtOnce() throws Exception {
    byte[] noTenant = RawProto.series(RawProto.label("job", "x"), RawProto.sample(1, 1));
    Answer a = process(snappy(noTenant));
    assertEquals(204, a.status());
    assertTrue(sender.calls().isEmpty());
  }

  @Test
  void aRequestSplitByTenantIsReleasedOnceBeforeItsAnswer() throws Exception {
    Answer a = process(snappy(series("a"), series("b")));
    assertEquals(204, a.status());
    assertEquals(2, sender.calls().size());
  }

  @Test
  void aRequestForwardedWholeIsHeldByItsFragmentUntilDelivered() throws Exception {
    Answer a = process(snappy(series("a"), series("a")));
    assertEquals(204, a.status());
    assertEquals(1, sender.calls().size());
    assertTrue(
        metrics.scrape().contains("relay_requests_forwarded_whole_total 1.0"), metrics.scrape());
  }

  @Test
  void aRetriedRequestKeepsItsBodyForTheLedgerAndReleasesItOnceEachTime() throws Exception {
    sender.always("b", Reply.status(503, "busy"));
    byte[] body = snappy(series("a"), series("b"));
    Answer first =
        process(body, TenantAllowList.ANY, new TrackingAllocator(), Duration.ofSeconds(3)).only();
    assertEquals(503, first.status());
    Answer retry =
        process(body, TenantAllowList.ANY, new TrackingAllocator(), Duration.ofSeconds(3)).only();
    assertEquals(503, retry.status());
    assertEquals(1, sender.callsTo("a").size(), "the retry skips the tenant delivered before");
    assertTrue(
        metrics.scrape().contains("relay_ledger_skipped_series_total 1.0"), metrics.scrape());
  }

  @Test
  void aFailureInsideTheRelayReleasesTheBodyOnceBeforeIts500() throws Exception {
    Answer a =
        process(
                snappy(series("a"), series("b")),
                TenantAllowList.ANY,
                new TrackingAllocator().failingWith(new IllegalStateException("injected")),
                Duration.ZERO)
            .only();
    assertEquals(500, a.status());
    assertEquals("internal error while processing the request", a.message());
  }

  @Test
  void runningOutOfMemoryReleasesTheBodyOnceBeforeIts503() throws Exception {
    Answer a =
        process(
                snappy(series("a"), series("b")),
                TenantAllowList.ANY,
                new TrackingAllocator().failingWith(new OutOfMemoryError("injected")),
                Duration.ZERO)
            .only();
    assertEquals(503, a.status());
    assertEquals(5, a.retryAfterSeconds());
  }
}
