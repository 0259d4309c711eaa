package io.prwrelay.server.write;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.codec.MemoryGrant;
import io.prwrelay.core.codec.ZstdCodec;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.encode.V2ToV1Converter;
import io.prwrelay.core.encode.WriteRequestCounter;
import io.prwrelay.core.route.MetricFamilies;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.SeriesLimits;
import io.prwrelay.core.route.TenantRouter;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.core.route.V2TenantRouter;
import io.prwrelay.core.wire.ScratchMemory;
import io.prwrelay.server.protocol.Protocol;
import java.util.List;
import java.util.function.Consumer;

/**
 * What one event loop thread reuses for every request it processes: tenant routers for PRW 1.0 and
 * for PRW 2.0 (writing 2.0, or 1.0 for a downstream that takes only 1.0), the checks of a PRW 2.0
 * request sent whole to a trusted tenant, a counter for PRW 1.0 requests sent whole to one, a zstd
 * decompression context, and the memory grant of the request being decompressed. Flyweights, not
 * thread-safe.
 *
 * <p>What the PRW 2.0 routers and {@link #v2ToV1} build of one request may take at most {@link
 * #maxOutputBytes} ({@code relay.server.max-decompressed-bytes}, the bound of the request itself),
 * and what the request's grant allows; their scratch arrays grow in one {@link #scratch}. Whether
 * the routers digest every series is fixed when the loop's resources are made.
 */
final class LoopResources implements AutoCloseable {
  /**
   * The scratch arrays of everything below: up to {@link ScratchMemory#RETAINED_BYTES} of their
   * growth stays between requests, beyond it is charged to the request that needs it and given back
   * after it.
   */
  final ScratchMemory scratch = new ScratchMemory();

  final V2ToV1Converter v2ToV1 = new V2ToV1Converter(scratch);
  final V2Check v2Check = new V2Check(scratch);
  final ZstdCodec zstd = new ZstdCodec();
  final RequestGrant grant = new RequestGrant();
  final WriteRequestCounter counter;
  final int maxOutputBytes;
  private final Router v1;
  private final Router v2;
  private final Router v2ToV1Router;

  /** Each router's {@code limitSeries}. */
  private final List<Consumer<SeriesLimits>> limitables;

  /** Routes one request with one of the loop's routers, as {@link #router} chose it. */
  @FunctionalInterface
  interface Router {
    /**
     * @param request borrowed
     * @param allowed the tenants the request's credentials may write: a request with series of
     *     another (refused 403) teaches the shared metric families nothing
     * @param sender the sender's id ({@link SenderKey#id()}): the PRW 1.0 router learns and looks
     *     up metric families under it; the PRW 2.0 routers do not need it
     * @param grant asked for the batches' bytes before they are allocated
     * @return the router's reused result, until the router routes again
     */
    RouteResult route(
        ByteBuf request,
        ByteBufAllocator alloc,
        TenantAllowList allowed,
        long sender,
        MemoryGrant grant);
  }

  /**
   * @param maxOutputBytes most bytes what the PRW 2.0 routers build of one request may take
   * @param digestSeries whether the routers digest every series for the tenant insight
   * @param families the metric families every loop's PRW 1.0 router teaches and consults
   */
  LoopResources(
      TenantRules rules, int maxOutputBytes, boolean digestSeries, MetricFamilies families) {
    this.counter = new WriteRequestCounter(rules.countSamples());
    this.maxOutputBytes = maxOutputBytes;
    TenantRouter v1 = new TenantRouter(rules, digestSeries, families, scratch);
    V2TenantRouter v2 =
        new V2TenantRouter(rules, V2BatchEncoder.Format.V2, maxOutputBytes, digestSeries, scratch);
    V2TenantRouter v2ToV1 =
        new V2TenantRouter(rules, V2BatchEncoder.Format.V1, maxOutputBytes, digestSeries, scratch);
    this.limitables = List.of(v1::limitSeries, v2::limitSeries, v2ToV1::limitSeries);
    this.v1 =
        (request, alloc, allowed, sender, grant) ->
            v1.route(request, alloc, sender, allowed::allows, grant);
    this.v2 = (request, alloc, allowed, sender, grant) -> v2.route(request, alloc, grant);
    this.v2ToV1Router =
        (request, alloc, allowed, sender, grant) -> v2ToV1.route(request, alloc, grant);
  }

  /** Has every router of the loop ask {@code limits} for each series of a limited tenant. */
  void limitSeries(SeriesLimits limits) {
    for (Consumer<SeriesLimits> r : limitables) {
      r.accept(limits);
    }
  }

  /** The router of requests in {@code input} into tenant batches in {@code output}. */
  Router router(Protocol input, Protocol output) {
    return input == Protocol.V1 ? v1 : output == Protocol.V2 ? v2 : v2ToV1Router;
  }

  @Override
  public void close() {
    zstd.close();
  }
}
