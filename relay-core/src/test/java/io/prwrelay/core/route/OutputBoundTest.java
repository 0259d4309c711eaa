package io.prwrelay.core.route;

import static io.prwrelay.testing.RequestBuffers.MAX_OUTPUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.prwrelay.core.codec.MemoryGrant;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.encode.V2BatchEncoder.Format;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.testing.ForEachSeed;
import io.prwrelay.testing.NoAllocationAllocator;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testing.RequestBuffers;
import io.prwrelay.testing.V2Oracle;
import io.prwrelay.testing.V2RawProto;
import io.prwrelay.testing.V2RequestGenerator;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The batches a PRW 2.0 router builds of one request take at most its output bound together ({@code
 * relay.server.max-decompressed-bytes} in the relay). PRW 1.0 copies a symbol into every series
 * that references it, and each tenant's PRW 2.0 request carries its own copy of the symbols it
 * uses, so a request of a few kilobytes could ask for hundreds of megabytes. Over the bound the
 * request is a {@link RequestError.Kind#TOO_LARGE} error naming the size and the key, found before
 * the output is allocated; at the bound it is routed exactly as without one.
 *
 * <p>The shapes are those of the attacks, scaled down: one 64 KiB symbol referenced by 100 series
 * of one tenant (in the relay, a 1 MiB symbol by 500 series in an 886-byte body), and by one series
 * of each of 100 tenants, against a bound of 1 MiB.
 */
class OutputBoundTest {
  private static final int CAP = 1 << 20;
  private static final String BIG = "x".repeat(64 << 10);
  private static final TenantRules RULES = TenantRules.builder().build();

  static Stream<Long> seeds() {
    return RequestBuffers.seeds(60);
  }

  /** {@link V2RawProto#symbolInEverySeries} with the 64 KiB symbol. */
  private static byte[] bigSymbolRequest(int series, int tenants) {
    return V2RawProto.symbolInEverySeries(BIG, series, tenants);
  }

  /** Bytes of the batches routing {@code request} in {@code format} makes without a bound. */
  private static long unboundedSize(byte[] request, Format format) {
    RouteResult r = RoutingProperties.route(new V2TenantRouter(RULES, format, MAX_OUTPUT), request);
    assertNull(r.error());
    long size = 0;
    for (TenantBatch b : r.batches()) {
      size += b.content().readableBytes();
    }
    r.clear();
    return size;
  }

  /** Bytes of the PRW 1.0 requests the oracle converts {@code request} to, one per tenant. */
  private static long oracleV1Size(byte[] request) throws Exception {
    long size = 0;
    for (WriteRequest w :
        V2Oracle.expectedV1(Request.parseFrom(request), RULES, new EnumMap<>(TenantProblem.class))
            .values()) {
      size += w.getSerializedSize();
    }
    return size;
  }

  private static RouteResult route(byte[] request, Format format, int cap, RecordingAllocator a) {
    ByteBuf in = Unpooled.wrappedBuffer(request);
    try {
      return new V2TenantRouter(RULES, format, cap).route(in, a);
    } finally {
      in.release();
    }
  }

  @Test
  void aSymbolInEverySeriesIsRefusedBeforeAnythingIsAllocated() throws Exception {
    byte[] request = bigSymbolRequest(100, 1);
    long converted = oracleV1Size(request);
    assertTrue(converted > 100L * BIG.length(), "each series carries its own copy");
    ByteBuf in = Unpooled.wrappedBuffer(request);
    RouteResult r;
    try {
      // A heap request is read in place: any allocation would be output.
      r = new V2TenantRouter(RULES, Format.V1, CAP).route(in, new NoAllocationAllocator());
    } finally {
      in.release();
    }
    RequestError e = r.error();
    assertEquals(RequestError.Kind.TOO_LARGE, e.kind());
    assertEquals(
        "converting this PRW 2.0 request to PRW 1.0 would take "
            + converted
            + " bytes, more than relay.server.max-decompressed-bytes=1048576 (PRW 1.0 repeats a"
            + " string in every series that references it)",
        e.message());
    assertEquals(0, r.batches().size());
  }

  @Test
  void oneSymbolInEveryTenantsTableIsRefusedBeforeTheBatchesPassTheBound() {
    byte[] request = bigSymbolRequest(100, 100);
    assertTrue(request.length < CAP / 8);
    long size = unboundedSize(request, Format.V2);
    assertTrue(size > 100L * BIG.length());
    RecordingAllocator alloc = new RecordingAllocator();
    RouteResult r = route(request, Format.V2, CAP, alloc);
    RequestError e = r.error();
    assertEquals(RequestError.Kind.TOO_LARGE, e.kind());
    // Every tenant's request is sized without writing it: the whole size, exactly.
    assertEquals(
        "splitting this PRW 2.0 request by tenant would take "
            + size
            + " bytes, more than relay.server.max-decompressed-bytes=1048576 (each tenant's"
            + " request carries its own copy of the symbols it references)",
        e.message());
    assertEquals(0, r.batches().size());
    assertTrue(alloc.allocated <= CAP, "allocated " + alloc.allocated + " bytes");
    alloc.assertAllReleased();
  }

  @Test
  void oneSymbolInEveryTenantsSeriesIsRefusedInPrw1WithTheWholeSize() throws Exception {
    byte[] request = bigSymbolRequest(100, 100);
    RecordingAllocator alloc = new RecordingAllocator();
    RouteResult r = route(request, Format.V1, CAP, alloc);
    assertEquals(RequestError.Kind.TOO_LARGE, r.error().kind());
    assertTrue(
        r.error().message().contains(" would take " + oracleV1Size(request) + " bytes, "),
        r.error().message());
    assertEquals(0, r.batches().size());
    assertTrue(alloc.allocated <= CAP, "allocated " + alloc.allocated + " bytes");
    alloc.assertAllReleased();
  }

  @Test
  void oneTenantsPrw2RequestIsNeverLargerThanTheRequest() throws Exception {
    byte[] request = bigSymbolRequest(100, 1);
    RouteResult r =
        RoutingProperties.route(new V2TenantRouter(RULES, Format.V2, request.length), request);
    V2RouteAssertions.assertRoutedLikeOracle(Request.parseFrom(request), RULES, r, Format.V2);
    r.clear();
  }

  @Test
  void theAttackShapesAtExactlyTheBoundAreRoutedLikeTheOracle() throws Exception {
    assertBoundIsExact(bigSymbolRequest(12, 1), Format.V1);
    assertBoundIsExact(bigSymbolRequest(12, 12), Format.V1);
    assertBoundIsExact(bigSymbolRequest(12, 12), Format.V2);
  }

  @ForEachSeed
  void generatedRequestsAtExactlyTheBoundAreRoutedAndOneByteLessIsRefused(long seed)
      throws Exception {
    V2RequestGenerator gen = new V2RequestGenerator(seed);
    byte[] request = gen.request(1 + gen.random().nextInt(300), RULES.labels()).bytes();
    for (Format format : Format.values()) {
      assertBoundIsExact(request, format);
    }
  }

  /**
   * Routes {@code request} with its output size as the bound (routed like the oracle), and with one
   * byte less (refused naming that size, nothing left allocated), through one router that routes
   * again afterwards.
   */
  private static void assertBoundIsExact(byte[] request, Format format) throws Exception {
    long size = unboundedSize(request, format);
    assertTrue(size > 0, "every request here has a series");
    V2TenantRouter router = new V2TenantRouter(RULES, format, (int) size);
    RouteResult ok = RoutingProperties.route(router, request);
    V2RouteAssertions.assertRoutedLikeOracle(Request.parseFrom(request), RULES, ok, format);
    ok.clear();

    RecordingAllocator alloc = new RecordingAllocator();
    RouteResult over = route(request, format, (int) size - 1, alloc);
    RequestError e = over.error();
    assertEquals(RequestError.Kind.TOO_LARGE, e.kind(), format.name());
    // The last batch is the one that passes the bound: the size is exact in both formats.
    assertTrue(
        e.message()
            .contains(
                " would take "
                    + size
                    + " bytes, more than"
                    + " relay.server.max-decompressed-bytes="
                    + (size - 1)
                    + " "),
        e.message());
    assertEquals(0, over.batches().size());
    alloc.assertAllReleased();

    RouteResult again = RoutingProperties.route(router, request);
    V2RouteAssertions.assertRoutedLikeOracle(Request.parseFrom(request), RULES, again, format);
    again.clear();
  }

  /** Routes {@code request} with a bound that never binds, asking {@code grant} for its batches. */
  private static RouteResult routeWithin(
      byte[] request, Format format, MemoryGrant grant, RecordingAllocator alloc) {
    ByteBuf in = Unpooled.wrappedBuffer(request);
    try {
      return new V2TenantRouter(RULES, format, MAX_OUTPUT).route(in, alloc, grant);
    } finally {
      in.release();
    }
  }

  @Test
  void eachBatchIsAskedOfTheGrantAsARunningTotalBeforeItIsAllocated() throws Exception {
    // Three tenants' PRW 1.0 requests, each repeating the 64 KiB symbol in its 4 series.
    byte[] request = bigSymbolRequest(12, 3);
    RecordingGrant grant = new RecordingGrant(Long.MAX_VALUE);
    RecordingAllocator alloc = new RecordingAllocator();
    RouteResult r = routeWithin(request, Format.V1, grant, alloc);
    assertNull(r.error());
    List<Long> totals = new ArrayList<>();
    long total = 0;
    for (TenantBatch b : r.batches()) {
      total += b.content().readableBytes();
      totals.add(total);
    }
    assertEquals(totals, grant.asks, "one ask per batch, the running total of their sizes");
    assertEquals(oracleV1Size(request), total);
    assertEquals(total, alloc.allocated, "each buffer has exactly the bytes asked for it");
    V2RouteAssertions.assertRoutedLikeOracle(Request.parseFrom(request), RULES, r, Format.V1);
    r.clear();
    alloc.assertAllReleased();
  }

  @Test
  void aPrw2BatchIsAskedForWithTheSlackItIsWrittenIn() throws Exception {
    byte[] request = bigSymbolRequest(12, 3);
    RecordingGrant grant = new RecordingGrant(Long.MAX_VALUE);
    RecordingAllocator alloc = new RecordingAllocator();
    RouteResult r = routeWithin(request, Format.V2, grant, alloc);
    assertNull(r.error());
    List<Long> totals = new ArrayList<>();
    long total = 0;
    for (TenantBatch b : r.batches()) {
      // The buffer is 16 bytes larger than the batch: a series is written before its length.
      assertEquals(b.content().readableBytes() + 16, b.content().capacity());
      total += b.content().capacity();
      totals.add(total);
    }
    assertEquals(totals, grant.asks);
    assertEquals(total, alloc.allocated);
    V2RouteAssertions.assertRoutedLikeOracle(Request.parseFrom(request), RULES, r, Format.V2);
    r.clear();
    alloc.assertAllReleased();
  }

  /** The running totals of the PRW 1.0 batches {@code request} is converted to, one per tenant. */
  private static List<Long> runningTotals(byte[] request) {
    RecordingGrant all = new RecordingGrant(Long.MAX_VALUE);
    RecordingAllocator alloc = new RecordingAllocator();
    routeWithin(request, Format.V1, all, alloc).clear();
    alloc.assertAllReleased();
    return all.asks;
  }

  @Test
  void aGrantThatRefusesIsAskedOnceMoreForTheWholeAndNothingIsAllocated() throws Exception {
    byte[] request = bigSymbolRequest(12, 3);
    List<Long> totals = runningTotals(request);
    long whole = oracleV1Size(request);
    assertEquals(whole, totals.get(2));
    // Room for the first tenant's batch, not for the second.
    RecordingGrant grant = new RecordingGrant(totals.get(0));
    RecordingAllocator alloc = new RecordingAllocator();
    RouteResult r = routeWithin(request, Format.V1, grant, alloc);
    RequestError e = r.error();
    assertEquals(RequestError.Kind.OVER_BUDGET, e.kind());
    assertEquals(
        "converting this PRW 2.0 request to PRW 1.0 would take "
            + whole
            + " bytes, more than the memory granted",
        e.message());
    assertEquals(List.of(totals.get(0), totals.get(1), whole), grant.asks);
    assertEquals(0, r.batches().size());
    assertEquals(totals.get(0), alloc.allocated, "only the first batch, granted, then released");
    alloc.assertAllReleased();
  }

  @Test
  void aGrantThatHasRoomWhenAskedForTheWholeGetsEveryBatch() throws Exception {
    byte[] request = bigSymbolRequest(12, 3);
    List<Long> totals = runningTotals(request);
    // Refuses the second running total once (memory in use), then grants the whole.
    RecordingGrant grant = new RecordingGrant(Long.MAX_VALUE);
    grant.refuseOnce = totals.get(1);
    RecordingAllocator alloc = new RecordingAllocator();
    RouteResult r = routeWithin(request, Format.V1, grant, alloc);
    assertNull(r.error());
    assertEquals(List.of(totals.get(0), totals.get(1), totals.get(2), totals.get(2)), grant.asks);
    V2RouteAssertions.assertRoutedLikeOracle(Request.parseFrom(request), RULES, r, Format.V1);
    r.clear();
    alloc.assertAllReleased();
  }

  @Test
  void aPrw1RequestsBatchesAreAskedOfTheGrantForWhatTheyAddBeyondTheRequest() throws Exception {
    byte[] series =
        RawProto.cat(
            RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(1, 1)),
            RawProto.series(RawProto.label("service_id", "b"), RawProto.sample(2, 2)));
    ByteBuf in = Unpooled.wrappedBuffer(series);
    try {
      // Split series copy the request once: nothing beyond it to ask for.
      RecordingGrant granting = new RecordingGrant(0);
      RecordingAllocator alloc = new RecordingAllocator();
      RouteResult r = new TenantRouter(RULES).route(in, alloc, granting);
      assertNull(r.error());
      assertEquals(List.of(), granting.asks);
      assertEquals(series.length, alloc.allocated);
      r.clear();
      alloc.assertAllReleased();
    } finally {
      in.release();
    }
    // Metadata broadcast to both tenants adds one more copy of it: that much is asked for.
    byte[] metadata =
        RawProto.len(
            3, RawProto.varintField(1, 1), RawProto.str(2, "jobs_total"), RawProto.str(4, "Jobs."));
    byte[] request = RawProto.cat(series, metadata);
    in = Unpooled.wrappedBuffer(request);
    try {
      RecordingGrant refusing = new RecordingGrant(0);
      RouteResult r = new TenantRouter(RULES).route(in, new NoAllocationAllocator(), refusing);
      assertEquals(RequestError.Kind.OVER_BUDGET, r.error().kind());
      assertEquals(1, refusing.asks.size());
      long beyond = refusing.asks.get(0);
      assertTrue(beyond > 0 && beyond <= metadata.length, "asked " + beyond);
      assertEquals(0, r.batches().size());

      RecordingGrant granting = new RecordingGrant(beyond);
      RecordingAllocator alloc = new RecordingAllocator();
      r = new TenantRouter(RULES).route(in, alloc, granting);
      assertNull(r.error());
      assertEquals(List.of(beyond), granting.asks);
      assertEquals(request.length + beyond, alloc.allocated);
      r.clear();
      alloc.assertAllReleased();
    } finally {
      in.release();
    }
  }

  /**
   * A grant that grants asks of up to {@code limit} bytes, recording every ask; {@link #refuseOnce}
   * makes it refuse one ask of exactly that many bytes, as a budget in use would.
   */
  static final class RecordingGrant implements MemoryGrant {
    final List<Long> asks = new ArrayList<>();
    final long limit;
    long refuseOnce = -1;

    RecordingGrant(long limit) {
      this.limit = limit;
    }

    @Override
    public boolean reserve(long bytes) {
      asks.add(bytes);
      if (bytes == refuseOnce) {
        refuseOnce = -1;
        return false;
      }
      return bytes <= limit;
    }
  }

  /** Heap buffers that are remembered, to check their sum and that each was released. */
  static final class RecordingAllocator extends AbstractByteBufAllocator {
    final List<ByteBuf> buffers = new ArrayList<>();
    long allocated;

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      ByteBuf b = UnpooledByteBufAllocator.DEFAULT.heapBuffer(initialCapacity, maxCapacity);
      buffers.add(b);
      allocated += initialCapacity;
      return b;
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      return newHeapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }

    void assertAllReleased() {
      for (ByteBuf b : buffers) {
        assertEquals(0, b.refCnt(), "a buffer of " + b.capacity() + " bytes was not released");
      }
    }
  }
}
