package io.prwrelay.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantRouter;
import io.prwrelay.core.route.TenantRules;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;
import org.xerial.snappy.Snappy;

/**
 * The whole per-request CPU work: snappy body → decompress → route → snappy-compress every tenant
 * batch. {@code relay} is what the relay does (body in a pooled direct buffer, as received from the
 * network); {@code baseline} decompresses to a byte[], splits with protobuf-java and compresses
 * each batch. {@code floor} is the codec work alone on the same bytes: decompress the body and
 * compress the tenant batches, split beforehand (what the relay's output holds, in the same kind of
 * buffer); {@code relay / floor} is what routing adds to the codecs.
 */
public class PipelineBenchmark extends RelayBenchmark {
  @Param({"file:../shared/testdata/1709380533560664458.data", "batch-2000x10"})
  public String payload;

  @Param("instance")
  public String tenantLabel;

  private byte[] compressed;
  private ByteBuf body;
  private TenantRouter router;
  private TenantRouter routerWithoutFamilies;
  private final List<ByteBuf> batches = new ArrayList<>();

  /** The relay's allocator (see RelayServer). */
  private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    compressed = Snappy.compress(Payloads.load(payload, tenantLabel));
    body = alloc.directBuffer(compressed.length).writeBytes(compressed);
    router = new TenantRouter(TenantRules.builder().labels(tenantLabel).build());
    routerWithoutFamilies =
        new TenantRouter(TenantRules.builder().labels(tenantLabel).maxFamilyTenants(0).build());
    ByteBuf decoded = SnappyCodec.decode(body, alloc, Integer.MAX_VALUE - 8);
    RouteResult result = router.route(decoded, alloc);
    for (TenantBatch b : result.batches()) {
      batches.add(b.takeContent());
    }
    result.clear();
    decoded.release();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    body.release();
    batches.forEach(ByteBuf::release);
    batches.clear();
  }

  @Benchmark
  public long relay() throws Exception {
    return relay(router);
  }

  /**
   * {@code relay} without learning metric families ({@code relay.metadata.max-family-tenants=0}):
   * the difference is what routing metadata-only requests by family costs a whole request.
   */
  @Benchmark
  public long relayWithoutFamilies() throws Exception {
    return relay(routerWithoutFamilies);
  }

  private long relay(TenantRouter router) throws Exception {
    ByteBuf decoded = SnappyCodec.decode(body, alloc, Integer.MAX_VALUE - 8);
    long out = 0;
    try {
      RouteResult result = router.route(decoded, alloc);
      for (TenantBatch b : result.batches()) {
        ByteBuf c = SnappyCodec.encode(b.content(), alloc);
        out += c.readableBytes();
        c.release();
      }
      result.clear();
    } finally {
      decoded.release();
    }
    return out;
  }

  /** The codec floor of {@code relay}: decompress the body, compress the pre-split batches. */
  @Benchmark
  public long floor() throws Exception {
    ByteBuf decoded = SnappyCodec.decode(body, alloc, Integer.MAX_VALUE - 8);
    long out = decoded.readableBytes();
    decoded.release();
    for (int i = 0; i < batches.size(); i++) {
      ByteBuf c = SnappyCodec.encode(batches.get(i), alloc);
      out += c.readableBytes();
      c.release();
    }
    return out;
  }

  @Benchmark
  public long baseline(Blackhole bh) throws Exception {
    byte[] decoded = Snappy.uncompress(compressed);
    long[] out = new long[1];
    GenericRelay.split(
        decoded,
        tenantLabel,
        (tenant, batch) -> {
          try {
            byte[] c = Snappy.compress(batch);
            out[0] += c.length;
            bh.consume(c);
          } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
          }
        });
    return out[0];
  }
}
