package io.prwrelay.core.route;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.sample;
import static io.prwrelay.testing.RawProto.series;
import static io.prwrelay.testing.RawProto.str;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.oracle.v1.WriteRequest;
import org.junit.jupiter.api.Test;

/**
 * Broadcast metadata is copied into every tenant batch only while the request's metadata bytes
 * times its tenants stay within {@link TenantRules#maxBroadcastMetadataBytes()}; above it the
 * request's metadata is dropped and counted, and its series are routed as usual.
 */
class MetadataBroadcastCapTest {
  // One metadata field of 26 bytes (tag and length included).
  private static final byte[] METADATA = len(3, str(2, "http_requests"), str(4, "help text"));

  private static byte[] request(int tenants) {
    byte[] out = METADATA;
    for (int i = 0; i < tenants; i++) {
      out = cat(out, series(label("service_id", "t" + i), sample(1, 1)));
    }
    return out;
  }

  private static RouteResult route(long cap, byte[] request) {
    TenantRouter router =
        new TenantRouter(TenantRules.builder().maxBroadcastMetadataBytes(cap).build());
    ByteBuf in = Unpooled.wrappedBuffer(request);
    try {
      return router.route(in, PooledByteBufAllocator.DEFAULT);
    } finally {
      in.release();
    }
  }

  /** Every batch of {@code result} counts and carries {@code metadata} metadata entries. */
  private static void assertMetadataInEveryBatch(int metadata, RouteResult result)
      throws Exception {
    for (TenantBatch b : result.batches()) {
      assertEquals(metadata, b.metadata());
      byte[] got = io.netty.buffer.ByteBufUtil.getBytes(b.content());
      assertEquals(metadata, WriteRequest.parseFrom(got).getMetadataCount());
    }
  }

  @Test
  void metadataWithinTheCapReachesEveryTenant() throws Exception {
    RouteResult result = route(4L * METADATA.length, request(4));
    assertEquals(4, result.batches().size());
    assertMetadataInEveryBatch(1, result);
    assertEquals(0, result.metadataDropped());
    result.clear();
  }

  @Test
  void metadataOverTheCapIsDroppedAndCountedWhileSeriesAreRouted() throws Exception {
    RouteResult result = route(4L * METADATA.length, request(5));
    assertEquals(5, result.batches().size());
    assertMetadataInEveryBatch(0, result);
    for (TenantBatch b : result.batches()) {
      assertEquals(1, b.series());
    }
    assertEquals(1, result.metadataDropped());
    result.clear();
  }
}
