package io.prwrelay.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.FastThreadLocal;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.DeliveryObserver;
import io.prwrelay.server.downstream.DownstreamClient;
import io.prwrelay.server.downstream.RequestDelivery;
import io.prwrelay.server.downstream.RetryPolicy;
import io.prwrelay.server.downstream.SenderAnswer;
import io.prwrelay.server.downstream.TenantSend;
import io.prwrelay.server.metrics.RelayMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * Turns one received write request into per-tenant deliveries: decompress into a pooled heap
 * buffer, route (labels only), compress each tenant batch, deliver, and compute the sender's
 * answer. All CPU work runs on the connection's event loop, which owns a {@link LoopResources}.
 */
final class WriteProcessor {
  /** Body encodings a sender may use. */
  enum Encoding {
    SNAPPY,
    ZSTD
  }

  private final RelayConfig config;
  private final DownstreamClient client;
  private final RetryPolicy retryPolicy;
  private final RelayMetrics metrics;
  private final FailureLog failureLog;
  private final FastThreadLocal<LoopResources> resources;

  WriteProcessor(
      RelayConfig config, DownstreamClient client, RelayMetrics metrics, FailureLog failureLog) {
    this.config = config;
    this.client = client;
    this.metrics = metrics;
    this.failureLog = failureLog;
    this.retryPolicy = new RetryPolicy(config.initialBackoff(), config.maxBackoff());
    TenantRules rules = config.tenantRules();
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
   * @param done receives the answer, on {@code loop}
   */
  void process(
      EventLoop loop,
      ByteBufAllocator alloc,
      ByteBuf body,
      Encoding encoding,
      String incomingTenant,
      long startNanos,
      Consumer<Answer> done) {
    LoopResources res = resources.get();
    metrics.received(body.readableBytes());
    ByteBuf decoded;
    try {
      decoded =
          encoding == Encoding.SNAPPY
              ? SnappyCodec.decode(body, alloc, config.maxDecompressedBytes())
              : res.zstd.decode(body, alloc, config.maxDecompressedBytes());
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
                      + config.tenantHeader()
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
            sends.add(
                new TenantSend(
                    b.tenant(),
                    compressed,
                    b.series(),
                    b.samples(),
                    b.histograms(),
                    b.exemplars(),
                    size));
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
    long deadline = startNanos + config.downstreamTimeout().toNanos();
    new RequestDelivery(
            client,
            retryPolicy,
            loop,
            sends,
            deadline,
            config.attemptTimeout().toNanos(),
            config.maxConcurrentSends(),
            new ObserverChain(metrics, failureLog),
            (SenderAnswer a) ->
                done.accept(new Answer(a.status(), a.message(), a.retryAfterSeconds(), false)))
        .start();
  }

  /**
   * The whole request as one batch for a trusted incoming tenant, or null when the tenant is
   * invalid.
   */
  private List<TenantSend> wholeRequest(
      String incomingTenant, ByteBuf decoded, ByteBufAllocator alloc) {
    if (!config.isValidIncomingTenant(incomingTenant)) {
      return null;
    }
    String tenant = config.tenantRules().prefix() + incomingTenant;
    ByteBuf compressed = SnappyCodec.encode(decoded, alloc);
    List<TenantSend> sends = new ArrayList<>(1);
    sends.add(new TenantSend(tenant, compressed, 0, 0, 0, 0, decoded.readableBytes()));
    return sends;
  }

  /** Metrics first, then the rate-limited failure log. */
  private static final class ObserverChain implements DeliveryObserver {
    private final RelayMetrics metrics;
    private final FailureLog log;

    ObserverChain(RelayMetrics metrics, FailureLog log) {
      this.metrics = metrics;
      this.log = log;
    }

    @Override
    public void attempt(TenantSend send, AttemptOutcome outcome, long nanos) {
      metrics.attempt(send, outcome, nanos);
    }

    @Override
    public void retry(TenantSend send, AttemptOutcome outcome, long delayNanos) {
      metrics.retry(send, outcome, delayNanos);
    }

    @Override
    public void finished(TenantSend send) {
      metrics.finished(send);
      if (send.last() != null && !send.last().success()) {
        log.failed(send);
      }
    }
  }
}
