package io.prwrelay.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.FastThreadLocal;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.server.config.TenantConfig;
import io.prwrelay.server.downstream.Delivery;
import io.prwrelay.server.downstream.TenantSend;
import io.prwrelay.server.metrics.RelayMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * Turns one received write request into per-tenant deliveries: decompress into a pooled heap
 * buffer, route (labels only), compress each tenant batch, deliver, and answer the sender from the
 * tenants' outcomes ({@link AnswerPolicy}). All CPU work runs on the connection's event loop, which
 * owns a {@link LoopResources}.
 */
final class WriteProcessor {
  private final int maxDecompressedBytes;
  private final TenantConfig tenants;
  private final Delivery delivery;
  private final RelayMetrics metrics;
  private final FastThreadLocal<LoopResources> resources;

  /**
   * @param maxDecompressedBytes largest decompressed request; larger is answered 400
   */
  WriteProcessor(
      int maxDecompressedBytes, TenantConfig tenants, Delivery delivery, RelayMetrics metrics) {
    this.maxDecompressedBytes = maxDecompressedBytes;
    this.tenants = tenants;
    this.delivery = delivery;
    this.metrics = metrics;
    TenantRules rules = tenants.rules();
    this.resources =
        new FastThreadLocal<>() {
          @Override
          protected LoopResources initialValue() {
            return new LoopResources(rules);
          }

          @Override
          protected void onRemoval(LoopResources value) {
            value.close();
          }
        };
  }

  /**
   * Processes one request.
   *
   * @param body takes ownership; the compressed request body
   * @param incomingTenant value of the tenant header on the request when it is trusted, else {@code
   *     null}
   * @param startNanos when the request started, on {@code loop}'s ticker
   * @param done receives the answer, on {@code loop}
   */
  void process(
      EventLoop loop,
      ByteBufAllocator alloc,
      ByteBuf body,
      BodyEncoding encoding,
      String incomingTenant,
      long startNanos,
      Consumer<Answer> done) {
    LoopResources res = resources.get();
    metrics.received(body.readableBytes());
    ByteBuf decoded;
    try {
      decoded =
          encoding == BodyEncoding.SNAPPY
              ? SnappyCodec.decode(body, alloc, maxDecompressedBytes)
              : res.zstd.decode(body, alloc, maxDecompressedBytes);
    } catch (CodecException e) {
      done.accept(
          Answer.of(
              400,
              "cannot decompress the "
                  + encoding.name().toLowerCase(Locale.ROOT)
                  + " body: "
                  + e.getMessage()));
      return;
    } finally {
      body.release();
    }
    List<TenantSend> sends;
    try {
      if (incomingTenant != null) {
        sends = wholeRequest(incomingTenant, decoded, alloc);
        if (sends == null) {
          done.accept(
              Answer.of(
                  400,
                  "the "
                      + tenants.tenantHeader()
                      + " header is not a valid tenant ID (characters a-z A-Z 0-9 ! - _ . * ' ( ),"
                      + " at most 150 bytes)"));
          return;
        }
      } else {
        RouteResult result = res.router.route(decoded, alloc);
        try {
          RequestError error = result.error();
          if (error != null) {
            metrics.rejectedSeries(
                error.kind() == RequestError.Kind.MALFORMED ? "malformed" : "no_tenant",
                result.seriesIn());
            done.accept(Answer.of(400, error.message()));
            return;
          }
          metrics.routed(result);
          sends = new ArrayList<>(result.batches().size());
          for (TenantBatch b : result.batches()) {
            int size = b.content().readableBytes();
            ByteBuf compressed = SnappyCodec.encode(b.content(), alloc);
            sends.add(new TenantSend(b.tenant(), compressed, b.counts(), size));
          }
        } finally {
          result.clear();
        }
      }
    } finally {
      decoded.release();
    }
    for (TenantSend s : sends) {
      metrics.tenantIn(s);
    }
    delivery.deliver(
        loop, sends, startNanos, outcomes -> done.accept(AnswerPolicy.fromOutcomes(outcomes)));
  }

  /**
   * The whole request as one batch for a trusted incoming tenant, or null when the tenant is
   * invalid.
   */
  private List<TenantSend> wholeRequest(
      String incomingTenant, ByteBuf decoded, ByteBufAllocator alloc) {
    String tenant = tenants.incomingTenant(incomingTenant);
    if (tenant == null) {
      return null;
    }
    ByteBuf compressed = SnappyCodec.encode(decoded, alloc);
    List<TenantSend> sends = new ArrayList<>(1);
    sends.add(new TenantSend(tenant, compressed, SeriesCounts.NONE, decoded.readableBytes()));
    return sends;
  }
}
