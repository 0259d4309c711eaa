package io.prwrelay.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.bench.RouteBenchmark.SeriesCounter;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.remotewrite.WriteRequestReader;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantRouter;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.server.config.InsightConfig;
import io.prwrelay.server.insight.TenantInsight;
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
 * batch. {@code relay} is what the relay does with its default settings (body in a pooled direct
 * buffer, as received from the network; every series digested for the tenant insight, which is on
 * by default; a request that is its own batch not compressed again, since the relay forwards its
 * body as it came). {@code relayInsightOff} is the same with {@code relay.insight.enabled=false}.
 * {@code baseline} decompresses to a byte[], splits with protobuf-java and compresses each batch.
 *
 * <p>{@code floor} is the work no relay can avoid on the same bytes: decompress the body, and then
 * either compress the tenant batches, split beforehand (what the relay's output holds, in the same
 * kind of buffer), or, for a request of one tenant that goes on as it came, scan its labels up to
 * each series' tenant (the reader alone, no digest). {@code relay / floor} is what routing (and the
 * insight's digest) adds.
 */
public class PipelineBenchmark extends RelayBenchmark {
  @Param({"file:../shared/testdata/1709380533560664458.data", "batch-2000x10", "single-2000"})
  public String payload;

  @Param("instance")
  public String tenantLabel;

  private byte[] compressed;
  private ByteBuf body;
  private TenantRouter router;
  private TenantRouter routerInsightOff;
  private TenantRouter routerWithoutFamilies;
  private WriteRequestReader reader;
  private final TenantInsight insight = TenantInsight.of(InsightConfig.defaults());
  private final SeriesCounter counter = new SeriesCounter();
  private boolean whole;
  private final List<ByteBuf> batches = new ArrayList<>();

  /** The relay's allocator (see RelayServer). */
  private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    compressed = Snappy.compress(Payloads.load(payload, tenantLabel));
    body = alloc.directBuffer(compressed.length).writeBytes(compressed);
    TenantRules rules = TenantRules.builder().labels(tenantLabel).build();
    router = new TenantRouter(rules, true);
    routerInsightOff = new TenantRouter(rules, false);
    routerWithoutFamilies =
        new TenantRouter(
            TenantRules.builder().labels(tenantLabel).maxFamilyTenants(0).build(), true);
    reader = new WriteRequestReader(List.of(tenantLabel), false);
    ByteBuf decoded = SnappyCodec.decode(body, alloc, Integer.MAX_VALUE - 8);
    RouteResult result = routerInsightOff.route(decoded, alloc);
    whole = result.whole();
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

  @Benchmark
  public long relayInsightOff() throws Exception {
    return relay(routerInsightOff);
  }

  /**
   * {@code relay} with what the relay does next with the digests: {@link TenantInsight#record} (the
   * per-tenant sketch updates). {@code relayRecorded / relayInsightOff} is the insight's whole cost
   * per request.
   */
  @Benchmark
  public long relayRecorded() throws Exception {
    return relay(router, insight);
  }

  /**
   * {@code relay} without learning metric families ({@code relay.metadata.max-family-tenants=0}):
   * the difference is what routing metadata-only requests by family costs a whole request.
   */
  @Benchmark
  public long relayWithoutFamilies() throws Exception {
    return relay(routerWithoutFamilies);
  }

  private long relay(TenantRouter r) throws Exception {
    return relay(r, null);
  }

  private long relay(TenantRouter r, TenantInsight recorder) throws Exception {
    ByteBuf decoded = SnappyCodec.decode(body, alloc, Integer.MAX_VALUE - 8);
    long out = 0;
    try {
      RouteResult result = r.route(decoded, alloc);
      if (recorder != null) {
        recorder.record(result);
      }
      if (result.whole()) {
        out = body.readableBytes(); // the body goes downstream as it came
      } else {
        for (TenantBatch b : result.batches()) {
          ByteBuf c = SnappyCodec.encode(b.content(), alloc);
          out += c.readableBytes();
          c.release();
        }
      }
      result.clear();
    } finally {
      decoded.release();
    }
    return out;
  }

  /**
   * The floor of {@code relay}: decompress the body, then compress the pre-split batches, or scan
   * the labels of a request forwarded as it came.
   */
  @Benchmark
  public long floor() throws Exception {
    ByteBuf decoded = SnappyCodec.decode(body, alloc, Integer.MAX_VALUE - 8);
    long out = decoded.readableBytes();
    if (whole) {
      counter.series = 0;
      reader.read(
          decoded.array(),
          decoded.arrayOffset() + decoded.readerIndex(),
          decoded.readableBytes(),
          counter);
      out += counter.series;
    }
    decoded.release();
    if (!whole) {
      for (int i = 0; i < batches.size(); i++) {
        ByteBuf c = SnappyCodec.encode(batches.get(i), alloc);
        out += c.readableBytes();
        c.release();
      }
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
