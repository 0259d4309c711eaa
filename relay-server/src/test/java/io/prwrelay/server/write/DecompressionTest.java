package io.prwrelay.server.write;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.Zstd;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.route.MetricFamilies;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.metrics.RelayMetrics;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

/**
 * The decompression stage on its own: what it refuses, with the sender's exact answer, and that it
 * only borrows the body and grows the request's reservation before it allocates.
 */
class DecompressionTest {
  private static final int MAX = 5000;

  private final RelayMetrics metrics = new RelayMetrics(10, ByteBufAllocator.DEFAULT);
  private final LoopResources res;
  private ByteBuf body;

  /** Bytes the budget held when the stage returned. */
  private long budgetAfter;

  DecompressionTest() throws Exception {
    TenantRules rules = RelayConfig.load(null, Map.of(), Map.of()).tenant().rules();
    res = new LoopResources(rules, MAX, false, MetricFamilies.of(rules));
  }

  @AfterEach
  void tearDown() {
    assertEquals(1, body.refCnt(), "the stage only borrows the body");
    body.release();
    res.close();
  }

  /** {@code n} bytes that compress well: a run of each byte value in turn. */
  private static byte[] raw(int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (i / 100);
    }
    return b;
  }

  /**
   * Decompresses {@code body} with its compressed size reserved in {@code budget}, as the ingress
   * admitted it.
   */
  private Decompression.Result decompress(int ratio, BodyEncoding encoding, InflightBudget budget) {
    InflightBudget.Reservation r = budget.admit(null, body.readableBytes()).reservation();
    Decompression stage = new Decompression(MAX, ratio, metrics);
    try {
      RequestGrant grant = res.grant.reset(budget, r, body.readableBytes());
      return stage.decompress(res, ByteBufAllocator.DEFAULT, body, grant, encoding);
    } finally {
      res.grant.clear();
      // The caller releases the reservation once the request is answered.
      budgetAfter = budget.inUse();
      r.release();
    }
  }

  private Decompression.Result decompress(int ratio, BodyEncoding encoding) {
    return decompress(ratio, encoding, new InflightBudget(1 << 20, 1 << 20));
  }

  private static Answer refusal(Decompression.Result result) {
    return assertInstanceOf(Refusal.class, result).answer();
  }

  @Test
  void decompressesIntoABufferOfItsOwnAfterGrowingTheReservation() throws Exception {
    byte[] raw = raw(4000);
    body = Unpooled.wrappedBuffer(Snappy.compress(raw));
    int compressed = body.readableBytes();
    Decompression.Result result = decompress(100, BodyEncoding.SNAPPY);
    ByteBuf decoded = assertInstanceOf(Decompression.Body.class, result).content();
    try {
      assertArrayEquals(raw, ByteBufUtil.getBytes(decoded));
      assertEquals(1, decoded.refCnt());
      assertEquals(0, body.readerIndex(), "the body is left as it came");
      assertEquals(compressed + raw.length, budgetAfter, "the reservation holds both");
    } finally {
      decoded.release();
    }
  }

  @Test
  void refusesABodyDeclaringMoreThanTheCapWith400NamingTheKey() throws Exception {
    body = Unpooled.wrappedBuffer(Snappy.compress(raw(MAX + 1)));
    Answer a = refusal(decompress(1000, BodyEncoding.SNAPPY));
    assertEquals(400, a.status());
    assertEquals(
        "cannot decompress the snappy body: snappy block declares 5001 decompressed bytes, more"
            + " than the limit of 5000 (relay.server.max-decompressed-bytes=5000)",
        a.message());
    assertEquals(-1, a.retryAfterSeconds());
  }

  @Test
  void refusesABodyPastTheRatioWith400NamingTheRatioAndTheBodySize() throws Exception {
    body = Unpooled.wrappedBuffer(Snappy.compress(raw(4000)));
    int compressed = body.readableBytes();
    Answer a = refusal(decompress(2, BodyEncoding.SNAPPY));
    assertEquals(400, a.status());
    assertEquals(
        "cannot decompress the snappy body: snappy block declares 4000 decompressed bytes, more"
            + " than the limit of "
            + 2 * compressed
            + " (relay.server.max-decompression-ratio=2 times the "
            + compressed
            + "-byte body)",
        a.message());
  }

  @Test
  void refusesACorruptBodyWith400() {
    body = Unpooled.wrappedBuffer(new byte[] {(byte) 0x80});
    Answer a = refusal(decompress(100, BodyEncoding.SNAPPY));
    assertEquals(400, a.status());
    assertEquals(
        "cannot decompress the snappy body: truncated snappy length preamble", a.message());
  }

  @Test
  void aZstdBodyOverTheCapIsRefusedUnderItsOwnName() {
    body = Unpooled.wrappedBuffer(Zstd.compress(raw(MAX + 1)));
    Answer a = refusal(decompress(1000, BodyEncoding.ZSTD));
    assertEquals(400, a.status());
    assertTrue(a.message().startsWith("cannot decompress the zstd body: "), a.message());
    assertTrue(a.message().endsWith(" (relay.server.max-decompressed-bytes=5000)"), a.message());
  }

  @Test
  void refuses503WhenTheBudgetHasNoRoomNowAndCountsIt() throws Exception {
    body = Unpooled.wrappedBuffer(Snappy.compress(raw(4000)));
    InflightBudget budget = new InflightBudget(5000, 5000);
    InflightBudget.Reservation other = budget.admit(null, 1000).reservation();
    try {
      Answer a = refusal(decompress(100, BodyEncoding.SNAPPY, budget));
      assertEquals(503, a.status());
      assertEquals(InflightBudget.RETRY_AFTER_SECONDS, a.retryAfterSeconds());
      assertEquals(
          "the relay's request memory (relay.server.max-inflight-bytes=5000) is in use; retry"
              + " later",
          a.message());
      assertTrue(
          metrics.scrape().contains("relay_inflight_rejected_total{reason=\"total\"} 1.0"),
          metrics.scrape());
    } finally {
      other.release();
    }
  }

  @Test
  void refuses413WhenTheRequestCouldNeverFit() throws Exception {
    body = Unpooled.wrappedBuffer(Snappy.compress(raw(4000)));
    int compressed = body.readableBytes();
    Answer a = refusal(decompress(100, BodyEncoding.SNAPPY, new InflightBudget(8000, 3000)));
    assertEquals(413, a.status());
    assertEquals(
        "the request takes "
            + (compressed + 4000)
            + " bytes compressed and decompressed, more than one client may hold"
            + " (relay.server.max-inflight-bytes-per-client=3000)",
        a.message());
    assertTrue(
        metrics.scrape().contains("relay_inflight_rejected_total{reason=\"too_large\"} 1.0"),
        metrics.scrape());
  }
}
