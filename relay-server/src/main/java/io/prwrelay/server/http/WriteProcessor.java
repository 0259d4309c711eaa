package io.prwrelay.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.FastThreadLocal;
import io.prwrelay.core.route.MetricFamilies;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.server.config.TenantConfig;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.downstream.Protocol;
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
 * <p>A stage that refuses the request returns a {@link Refusal}; a request with nothing to deliver
 * is answered 204 at once. The compressed body has one owner, {@link #process}, which releases it
 * in one {@code finally}: every stage borrows it, and what needs it longer (a fragment forwarding
 * it as it came, an answer that may hash it for the ledger) takes a reference of its own. An answer
 * given at once is given after the body was released. Decompression and routing run on the
 * connection's event loop, which owns a {@link LoopResources}.
 *
 * <p>A request that is its own tenant batch (every series to one tenant and nothing to change, or a
 * trusted tenant header) is still read in full, but its batch is the decompressed request itself,
 * and when its body is snappy that body goes to the lane as it came. Every answer to a PRW 2.0
 * sender carries the {@code *-Written} headers, failures included.
 */
final class WriteProcessor {
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
  WriteProcessor(
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
   * Processes one request.
   *
   * @param body takes ownership; the compressed request body
   * @param reservation the request's share of {@code budget}, holding the compressed body; grown to
   *     hold what the body decompresses to, the tenant batches built of it and the scratch memory
   *     to build them, each before it is allocated ({@link RequestGrant}; the caller releases it
   *     once answered)
   * @param input the message the body holds
   * @param incomingTenant value of the tenant header on the request when it is trusted, else {@code
   *     null}
   * @param senderRetries the sender's earlier sends of the request ({@code Retry-Attempt}), 0 for
   *     none; passed on to the downstream with the relay's own retries
   * @param allowed tenants the request's credentials may write; a series of another one makes the
   *     whole request 403, with nothing delivered
   * @param sender who sent it: its metadata goes to the tenants it sent series of, its ledgers are
   *     its own
   * @param startNanos when the request started, on {@code loop}'s ticker
   * @param answer receives the answer, on {@code loop} (with the {@code *-Written} headers for a
   *     PRW 2.0 sender): also when something fails inside the relay (500, or 503 when memory ran
   *     out), after everything the request held was released
   */
  void process(
      EventLoop loop,
      ByteBufAllocator alloc,
      ByteBuf body,
      InflightBudget budget,
      InflightBudget.Reservation reservation,
      BodyEncoding encoding,
      Protocol input,
      String incomingTenant,
      int senderRetries,
      TenantAllowList allowed,
      SenderKey sender,
      long startNanos,
      Consumer<Answer> answer) {
    Answer now;
    try {
      LoopResources res = resources.get();
      metrics.received(body.readableBytes());
      now =
          stages(
              res,
              loop,
              alloc,
              body,
              budget,
              reservation,
              encoding,
              input,
              incomingTenant,
              senderRetries,
              allowed,
              sender,
              startNanos,
              answer);
    } catch (RuntimeException | Error e) {
      now = internalError(e, loop.ticker().nanoTime());
    } finally {
      body.release();
    }
    if (now != null) {
      // A PRW 2.0 sender learns what was written from every answer, failures included (the
      // lanes' answers carry it: Delivery).
      answer.accept(now.forSenderOf(input));
    }
  }

  /**
   * Has every request pass the per-tenant limits: the series limits at the route step, the samples
   * limits before the lanes. Called before the first request.
   */
  void limits(TenantLimits limits) {
    this.limits = limits;
    routing.limits(limits);
    delivery.limits(limits);
  }

  /**
   * Decompresses, routes and delivers the request, each stage releasing what it made of the body
   * when it fails.
   *
   * @param body borrowed
   * @return the answer known at once (a refusal, or 204 when there is nothing to deliver), or
   *     {@code null} when {@code done} gets the answer from the lanes
   */
  private Answer stages(
      LoopResources res,
      EventLoop loop,
      ByteBufAllocator alloc,
      ByteBuf body,
      InflightBudget budget,
      InflightBudget.Reservation reservation,
      BodyEncoding encoding,
      Protocol input,
      String incomingTenant,
      int senderRetries,
      TenantAllowList allowed,
      SenderKey sender,
      long startNanos,
      Consumer<Answer> done) {
    RequestGrant grant = res.grant.reset(budget, reservation, body.readableBytes());
    Routed routed;
    try {
      Decompression.Result decompressed =
          decompression.decompress(res, alloc, body, grant, encoding);
      if (decompressed instanceof Refusal refusal) {
        return refusal.answer();
      }
      ByteBuf decoded = ((Decompression.Body) decompressed).content();
      routed = routing.route(res, alloc, decoded, input, incomingTenant, allowed, sender, grant);
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
    delivery.deliver(
        loop,
        body,
        encoding,
        input,
        batches.list(),
        batches.whole(),
        batches.limited(),
        sender,
        senderRetries,
        startNanos,
        done);
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
