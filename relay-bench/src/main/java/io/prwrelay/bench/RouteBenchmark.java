package io.prwrelay.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.remotewrite.HaLabels;
import io.prwrelay.core.remotewrite.LabelSetHasher;
import io.prwrelay.core.remotewrite.SeriesView;
import io.prwrelay.core.remotewrite.WriteRequestReader;
import io.prwrelay.core.remotewrite.WriteRequestVisitor;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantRouter;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.core.route.V2TenantRouter;
import io.prwrelay.server.config.LimitsConfig;
import io.prwrelay.server.limits.TenantLimits;
import java.time.Duration;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The route step: decompressed request bytes → one WriteRequest per tenant. {@code route} is the
 * relay's lazy reader and splice; {@code baseline} is a protobuf-java full parse, per-tenant
 * rebuild and serialize over the same input.
 *
 * <p>The PRW 2.0 rows take the same series re-encoded as a 2.0 request ({@link V2Payloads}): {@code
 * routeV2} writes one 2.0 request per tenant with its own symbols table, {@code routeV2ToV1} one
 * converted 1.0 request per tenant; {@code baselineV2} and {@code baselineV2ToV1} do the same with
 * protobuf-java ({@link GenericRelayV2}).
 */
public class RouteBenchmark extends RelayBenchmark {
  /**
   * A generated shape ({@link Payloads#SHAPES}) or {@code file:<path>} of an uncompressed
   * WriteRequest.
   */
  @Param({
    "file:../shared/testdata/1709380533560664458.data",
    "file:../shared/testdata/1709380533705807779.data",
    "file:../shared/testdata/greptimedb_write_request.pb.data",
    "node-exporter-10k",
    "batch-2000x10",
    "tenants-1000x5",
    "long-values"
  })
  public String payload;

  @Param("instance")
  public String tenantLabel;

  private byte[] bytes;
  private ByteBuf request;
  private TenantRouter router;
  private TenantRouter routerWithoutFamilies;
  private TenantRouter countingRouter;
  private TenantRouter digestingRouter;
  private V2TenantRouter v2DigestingRouter;
  private TenantRouter limitedRouter;
  private TenantRouter digestingLimitedRouter;
  private V2TenantRouter v2DigestingLimitedRouter;
  private WriteRequestReader reader;
  private WriteRequestReader countingReader;
  private byte[] v2Bytes;
  private ByteBuf v2Request;
  private V2TenantRouter v2Router;
  private V2TenantRouter v2ToV1Router;
  private final SeriesCounter counter = new SeriesCounter();
  private LabelWalk labelWalk;
  // [start, end) of every series' leading run of labels, for labelSetHash.
  private int[] labelRanges;
  private final HaLabels haLabels = HaLabels.defaults();

  /** Visitor that only counts, so {@code scan} measures the reader. */
  static final class SeriesCounter implements WriteRequestVisitor {
    int series;

    @Override
    public boolean onSeries(SeriesView s) {
      series += s.tenantLabel() + 1;
      return true;
    }

    @Override
    public void onMetadata(int start, int end) {}
  }

  /**
   * The output bound of the PRW 2.0 routers: {@code relay.server.max-decompressed-bytes}' default.
   */
  private static final int MAX_OUTPUT_BYTES = 128 << 20;

  /** The relay's allocator (see RelayServer). */
  private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;

  @Setup(Level.Trial)
  public void setUp() {
    bytes = Payloads.load(payload, tenantLabel);
    labelWalk = new LabelWalk(tenantLabel);
    labelRanges = LabelWalk.labelRanges(bytes);
    request = Unpooled.wrappedBuffer(bytes);
    router = new TenantRouter(TenantRules.builder().labels(tenantLabel).build());
    routerWithoutFamilies =
        new TenantRouter(TenantRules.builder().labels(tenantLabel).maxFamilyTenants(0).build());
    countingRouter =
        new TenantRouter(TenantRules.builder().labels(tenantLabel).countSamples(true).build());
    reader = new WriteRequestReader(List.of(tenantLabel), false);
    countingReader = new WriteRequestReader(List.of(tenantLabel), true);
    v2Bytes = V2Payloads.fromV1(bytes);
    v2Request = Unpooled.wrappedBuffer(v2Bytes);
    TenantRules rules = TenantRules.builder().labels(tenantLabel).build();
    v2Router = new V2TenantRouter(rules, V2BatchEncoder.Format.V2, MAX_OUTPUT_BYTES);
    v2ToV1Router = new V2TenantRouter(rules, V2BatchEncoder.Format.V1, MAX_OUTPUT_BYTES);
    digestingRouter = new TenantRouter(rules, true);
    v2DigestingRouter = new V2TenantRouter(rules, V2BatchEncoder.Format.V2, MAX_OUTPUT_BYTES, true);
    // Every tenant limited to 1,000,000 active series: none near its limit, as in the usual case.
    TenantLimits limits =
        new TenantLimits(
            new LimitsConfig(
                new LimitsConfig.Limits(1_000_000, 0, 1),
                Duration.ofMinutes(10),
                null,
                Duration.ofSeconds(10),
                1L << 30),
            System::nanoTime,
            ok -> {});
    limitedRouter = new TenantRouter(rules, false);
    limitedRouter.limitSeries(limits);
    digestingLimitedRouter = new TenantRouter(rules, true);
    digestingLimitedRouter.limitSeries(limits);
    v2DigestingLimitedRouter =
        new V2TenantRouter(rules, V2BatchEncoder.Format.V2, MAX_OUTPUT_BYTES, true);
    v2DigestingLimitedRouter.limitSeries(limits);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    request.release();
    v2Request.release();
  }

  @Benchmark
  public int route() {
    return tenants(router.route(request, alloc));
  }

  /**
   * {@code route}, then the HA key of every tenant batch read as the lanes read it ({@link
   * HaLabels#keyOf}: the first series' labels, once per batch): the difference to {@code route} is
   * what keeping an HA pair's replicas apart costs per request.
   */
  @Benchmark
  public long routeReadingHaKeys() {
    RouteResult result = router.route(request, alloc);
    long keys = 0;
    for (int i = 0; i < result.batches().size(); i++) {
      keys += haLabels.keyOf(result.batches().get(i).content());
    }
    result.clear();
    return keys;
  }

  /**
   * {@code route} without learning metric families ({@code relay.metadata.max-family-tenants=0}):
   * the difference to {@code route} is what learning which tenants send which families (to route
   * metadata-only requests) costs the route step.
   */
  @Benchmark
  public int routeWithoutFamilies() {
    return tenants(routerWithoutFamilies.route(request, alloc));
  }

  /**
   * {@code route} with {@code relay.metrics.count-samples=true}: every field of every series is
   * walked to count samples, exemplars and histograms per tenant. The difference to {@code route}
   * is what that option costs.
   */
  @Benchmark
  public int routeCountingSamples() {
    return tenants(countingRouter.route(request, alloc));
  }

  /**
   * {@code route} digesting every series for the tenant insight ({@code relay.insight.enabled}):
   * each series' remaining labels walked by tag and length, the label set hashed in place, its
   * metric name recorded. The difference to {@code route} is the route step's share of the
   * insight's cost (the sketch updates are {@code PipelineBenchmark.relayWithInsight}'s).
   */
  @Benchmark
  public int routeDigesting() {
    return tenants(digestingRouter.route(request, alloc));
  }

  /**
   * {@code routeDigesting} with every tenant's series limit on ({@code
   * relay.limits.max-series-per-tenant}) and no tenant near it: the difference to {@code
   * routeDigesting} is what the limit costs with the insight on (the default), one filter lookup
   * per series, the hash being the insight's.
   */
  @Benchmark
  public int routeDigestingLimited() {
    return tenants(digestingLimitedRouter.route(request, alloc));
  }

  /**
   * {@code route} with every tenant's series limit on and the insight off: the difference to {@code
   * route} is the label set hash and the filter lookup.
   */
  @Benchmark
  public int routeLimited() {
    return tenants(limitedRouter.route(request, alloc));
  }

  /**
   * {@code routeV2Digesting} with every tenant's series limit on, like {@code
   * routeDigestingLimited}.
   */
  @Benchmark
  public int routeV2DigestingLimited() {
    return tenants(v2DigestingLimitedRouter.route(v2Request, alloc));
  }

  /** {@code routeV2} digesting every series, like {@code routeDigesting}. */
  @Benchmark
  public int routeV2Digesting() {
    return tenants(v2DigestingRouter.route(v2Request, alloc));
  }

  /** The lazy scan alone (labels until the tenant, then the next series): the reader's share. */
  @Benchmark
  public int scan() {
    counter.series = 0;
    reader.read(bytes, 0, bytes.length, counter);
    return counter.series;
  }

  /**
   * The least a label-reading router must do ({@link LabelWalk}): labels hopped by tag and length
   * to the tenant label, nothing validated or reported. Against {@code copy}: what walking the
   * labels costs by itself.
   */
  @Benchmark
  public int labelWalk() {
    return labelWalk.walk(bytes, 0, bytes.length);
  }

  /**
   * {@code labelWalk} with the reader's checks on the way to the tenant label ({@link
   * LabelWalk#walkValidated}): between it and {@code scan} is the reader's report of each series.
   */
  @Benchmark
  public int labelWalkValidated() {
    return labelWalk.walkValidated(bytes, 0, bytes.length);
  }

  /**
   * The tenant insight's hash of every series' whole label set ({@link LabelSetHasher#hash}),
   * alone: the ranges are found beforehand, so this is the hashing only. With {@code
   * labelWalkValidated}, the floor of {@code routeDigesting}: a router that counts distinct series
   * must read every label byte once, which the walk to the tenant label does not.
   */
  @Benchmark
  public long labelSetHash() {
    return LabelWalk.hashLabelSets(bytes, 0, labelRanges);
  }

  /** {@code scan} counting every series' fields by tag, as {@code routeCountingSamples} reads. */
  @Benchmark
  public int scanCountingSamples() {
    counter.series = 0;
    countingReader.read(bytes, 0, bytes.length, counter);
    return counter.series;
  }

  /**
   * One copy of the payload into a pooled heap buffer, the same as {@code CodecBenchmark.copy}:
   * here so that the route step's floor (touching every byte once) is in the same run and class.
   */
  @Benchmark
  public int copy() {
    ByteBuf out = alloc.heapBuffer(bytes.length);
    out.writeBytes(bytes);
    int n = out.readableBytes();
    out.release();
    return n;
  }

  @Benchmark
  public int baseline(Blackhole bh) throws Exception {
    return GenericRelay.split(bytes, tenantLabel, (tenant, batch) -> bh.consume(batch));
  }

  /** PRW 2.0 in, one PRW 2.0 request per tenant out, each with a minimal symbols table. */
  @Benchmark
  public int routeV2() {
    return tenants(v2Router.route(v2Request, alloc));
  }

  /** PRW 2.0 in, one converted PRW 1.0 request per tenant out. */
  @Benchmark
  public int routeV2ToV1() {
    return tenants(v2ToV1Router.route(v2Request, alloc));
  }

  @Benchmark
  public int baselineV2(Blackhole bh) throws Exception {
    return GenericRelayV2.split(v2Bytes, tenantLabel, (tenant, batch) -> bh.consume(batch));
  }

  @Benchmark
  public int baselineV2ToV1(Blackhole bh) throws Exception {
    return GenericRelayV2.toV1(v2Bytes, tenantLabel, (tenant, batch) -> bh.consume(batch));
  }

  /** The number of tenants a route found; the result is cleared, its batches released. */
  private static int tenants(RouteResult result) {
    int tenants = result.batches().size();
    result.clear();
    return tenants;
  }
}
