package io.prwrelay.server.write;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;
import io.prwrelay.core.route.MetricFamilies;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.server.config.TenantConfig;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.insight.TenantInsight;
import io.prwrelay.server.lane.DeliveryLedger;
import io.prwrelay.server.lane.Lanes;
import io.prwrelay.server.limits.TenantLimits;
import io.prwrelay.server.metrics.RelayMetrics;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Turns one received write request into per-tenant fragments and answers the sender from their
 * outcomes, in three stages, each in its own class:
 *
 * <ol>
 *   <li>{@link Decompression}: the body into a pooled heap buffer, within the size caps and the
 *       memory budget;
 *   <li>{@link RouteStage}: the decompressed request into one batch per tenant (labels only), in
 *       the protocol the downstream takes, with the router chosen once for the request, the batches
 *       and the scratch memory to build them in the memory budget; or refused (400 invalid, 403 a
 *       tenant the credentials may not write, 503/413 no memory for them);
 *   <li>{@link Delivery}: every batch to its lane ({@link Lanes}), skipping tenants the {@link
 *       DeliveryLedger} knows an earlier attempt of the same body delivered, and the answer from
 *       their outcomes ({@link AnswerPolicy}).
 * </ol>
 *
 * <p>The ingress hands it each request as one {@link WriteInput} ({@link #process}), and gets one
 * {@link Answer} back. A stage that refuses the request returns a {@link Refusal}; a request with
 * nothing to deliver is answered 204 at once. The compressed body has one owner, {@link #process},
 * which releases it in one {@code finally}: every stage borrows it, and what needs it longer (a
 * fragment forwarding it as it came, an answer that may hash it for the ledger) takes a reference
 * of its own. An answer given at once is given after the body was released. Decompression and
 * routing run on the connection's event loop, which owns a {@link LoopResources}.
 *
 * <p>A request that is its own tenant batch (every series to one tenant and nothing to change, or a
 * trusted tenant header) is still read in full, but its batch is the decompressed request itself,
 * and when its body is snappy that body goes to the lane as it came. Every answer to a PRW 2.0
 * sender carries the {@code *-Written} headers, failures included.
 */
public final class WriteProcessor {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.server");

  private final RelayMetrics metrics;

  /**
   * At most one stack trace a minute for requests that failed inside the relay (a sender that can
   * make its requests fail must not flood the log); the next line says how many were left out, and
   * {@code relay_internal_errors_total} counts every one.
   */
  private final LogLimiter errorLog = new LogLimiter(TimeUnit.MINUTES.toNanos(1));

  private final FastThreadLocal<LoopResources> resources;
  private final Decompression decompression;
  private final RouteStage routing;
  private final Delivery delivery;

  /** The per-tenant limits, set before the first request; {@code null} when none is configured. */
  private volatile TenantLimits limits;

  /**
   * @param maxDecompressedBytes largest decompressed request, and largest total of the requests
   *     built from one by converting it or splitting its symbols table by tenant; larger is
   *     answered 400
   * @param maxDecompressionRatio largest decompressed size per compressed byte; more is answered
   *     400
   * @param timeout deadline of a sender request in the lanes, from its start
   * @param protocol the Remote Write version PRW 2.0 input is sent downstream in
   * @param insight told every routed request (the routers digest series when it is enabled)
   */
  public WriteProcessor(
      int maxDecompressedBytes,
      int maxDecompressionRatio,
      TenantConfig tenants,
      Lanes lanes,
      DeliveryLedger ledger,
      Duration timeout,
      RelayMetrics metrics,
      DownstreamProtocol protocol,
      TenantInsight insight) {
    this.metrics = metrics;
    this.decompression = new Decompression(maxDecompressedBytes, maxDecompressionRatio, metrics);
    this.routing = new RouteStage(tenants, protocol, metrics, insight);
    this.delivery = new Delivery(lanes, ledger, timeout.toNanos(), metrics);
    TenantRules rules = tenants.rules();
    boolean digest = insight.enabled();
    // Learned from the series every loop routes; routes PRW 1.0 requests that carry only metadata.
    MetricFamilies families = MetricFamilies.of(rules);
    metrics.metricFamilies(families);
    this.resources =
        new FastThreadLocal<>() {
          @Override
          protected LoopResources initialValue() {
            LoopResources res = new LoopResources(rules, maxDecompressedBytes, digest, families);
            TenantLimits l = limits;
            if (l != null) {
              res.limitSeries(l);
            }
            return res;
          }

          @Override
          protected void onRemoval(LoopResources value) {
            value.close();
          }
        };
  }

  /**
   * Processes one request: the seam between the ingress and the pipeline.
   *
   * @param input the request; takes ownership of its body, borrows its reservation (grown here,
   *     released by the caller once answered)
   * @param answer receives the answer, on the input's loop (with the {@code *-Written} headers for
   *     a PRW 2.0 sender): also when something fails inside the relay (500, or 503 when memory ran
   *     out), after everything the request held was released
   */
  public void process(WriteInput input, Consumer<Answer> answer) {
    ByteBuf body = input.body();
    Answer now;
    try {
      LoopResources res = resources.get();
      metrics.received(body.readableBytes());
      now = stages(res, input, answer);
    } catch (RuntimeException | Error e) {
      now = internalError(e, input.loop().ticker().nanoTime());
    } finally {
      body.release();
    }
    if (now != null) {
      // A PRW 2.0 sender learns what was written from every answer, failures included (the
      // lanes' answers carry it: Delivery).
      answer.accept(now.forSenderOf(input.head().protocol()));
    }
  }

  /**
   * Has every request pass the per-tenant limits: the series limits at the route step, the samples
   * limits before the lanes. Called before the first request.
   */
  public void limits(TenantLimits limits) {
    this.limits = limits;
    routing.limits(limits);
    delivery.limits(limits);
  }

  /**
   * Decompresses, routes and delivers the request, each stage releasing what it made of the body
   * when it fails.
   *
   * @param in the request; its body borrowed
   * @return the answer known at once (a refusal, or 204 when there is nothing to deliver), or
   *     {@code null} when {@code done} gets the answer from the lanes
   */
  private Answer stages(LoopResources res, WriteInput in, Consumer<Answer> done) {
    ByteBuf body = in.body();
    WriteHead head = in.head();
    InflightBudget.Reservation reservation = in.reservation();
    RequestGrant grant = res.grant.reset(reservation.budget(), reservation, body.readableBytes());
    Routed routed;
    try {
      Decompression.Result decompressed =
          decompression.decompress(res, in.alloc(), body, grant, head.encoding());
      if (decompressed instanceof Refusal refusal) {
        return refusal.answer();
      }
      ByteBuf decoded = ((Decompression.Body) decompressed).content();
      routed =
          routing.route(
              res,
              in.alloc(),
              decoded,
              head.protocol(),
              head.incomingTenant(),
              in.allowed(),
              in.sender(),
              grant);
    } finally {
      grant.clear();
    }
    if (routed instanceof Refusal refusal) {
      return refusal.answer();
    }
    Routed.Batches batches = (Routed.Batches) routed;
    if (batches.list().isEmpty()) {
      return AnswerPolicy.withLimited(AnswerPolicy.fromResults(List.of()), batches.limited());
    }
    delivery.deliver(in, batches, done);
    return null;
  }

  /**
   * The last resort's answer. Memory running out passes; anything else (a bug, a native codec
   * library that failed to load) is worth its stack trace, one a minute ({@link #errorLog}). The
   * sender is answered either way.
   */
  private Answer internalError(Throwable e, long nowNanos) {
    boolean memory = e instanceof OutOfMemoryError;
    metrics.internalError(memory ? "memory" : "exception");
    long left = errorLog.pass(nowNanos);
    if (left >= 0) {
      LOG.log(
          Level.WARNING,
          "write request failed inside the relay"
              + (left > 0 ? " (and " + left + " more since the last such line, not logged)" : ""),
          e);
    }
    return memory
        ? new Answer(503, "the relay is out of memory for requests; retry later", 5, false)
        : Answer.of(500, "internal error while processing the request");
  }
}
