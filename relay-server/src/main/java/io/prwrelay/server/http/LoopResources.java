package io.prwrelay.server.http;

import io.prwrelay.core.codec.ZstdCodec;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.encode.V2ToV1Converter;
import io.prwrelay.core.encode.WriteRequestCounter;
import io.prwrelay.core.route.MetricFamilies;
import io.prwrelay.core.route.TenantRouter;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.core.route.V2TenantRouter;

/**
 * What one event loop thread reuses for every request it processes: tenant routers for PRW 1.0 and
 * for PRW 2.0 (writing 2.0, or 1.0 for a downstream that takes only 1.0), the checks of a PRW 2.0
 * request sent whole to a trusted tenant, a counter for PRW 1.0 requests sent whole to one, a zstd
 * decompression context, and the memory grant of the request being decompressed. Flyweights, not
 * thread-safe.
 *
 * <p>What the PRW 2.0 routers and {@link #v2ToV1} build of one request may take at most {@link
 * #maxOutputBytes} ({@code relay.server.max-decompressed-bytes}, the bound of the request itself).
 */
final class LoopResources implements AutoCloseable {
  final TenantRouter router;
  final V2TenantRouter v2Router;
  final V2TenantRouter v2ToV1Router;
  final V2ToV1Converter v2ToV1 = new V2ToV1Converter();
  final V2Check v2Check = new V2Check();
  final ZstdCodec zstd = new ZstdCodec();
  final RequestGrant grant = new RequestGrant();
  final WriteRequestCounter counter;
  final int maxOutputBytes;

  /**
   * @param maxOutputBytes most bytes what the PRW 2.0 routers build of one request may take
   * @param digestSeries whether the routers digest every series for the tenant insight
   * @param families the metric families every loop's PRW 1.0 router teaches and consults
   */
  LoopResources(
      TenantRules rules, int maxOutputBytes, boolean digestSeries, MetricFamilies families) {
    this.counter = new WriteRequestCounter(rules.countSamples());
    this.maxOutputBytes = maxOutputBytes;
    this.router = new TenantRouter(rules, digestSeries, families);
    this.v2Router =
        new V2TenantRouter(rules, V2BatchEncoder.Format.V2, maxOutputBytes, digestSeries);
    this.v2ToV1Router =
        new V2TenantRouter(rules, V2BatchEncoder.Format.V1, maxOutputBytes, digestSeries);
  }

  @Override
  public void close() {
    zstd.close();
  }
}
