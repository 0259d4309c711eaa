package io.prwrelay.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.FastThreadLocal;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.encode.V2ToV1Converter;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.route.MetricFamilies;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.core.route.V2TenantRouter;
import io.prwrelay.server.config.ConfigKeys;
import io.prwrelay.server.config.TenantConfig;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.downstream.Protocol;
import io.prwrelay.server.insight.TenantInsight;
import io.prwrelay.server.lane.DeliveryLedger;
import io.prwrelay.server.lane.Fragment;
import io.prwrelay.server.lane.FragmentOutcome;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import io.prwrelay.server.lane.Lanes;
import io.prwrelay.server.lane.LedgerKey;
import io.prwrelay.server.lane.SenderRequest;
import io.prwrelay.server.metrics.RelayMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Turns one received write request into per-tenant fragments and answers the sender from their
 * outcomes: decompress into a pooled heap buffer, route (labels only), skip tenants the {@link
 * DeliveryLedger} knows were delivered by an earlier attempt of the same body, hand every other
 * tenant's batch to its lane ({@link Lanes}), and answer from the results ({@link AnswerPolicy}).
 * When the answer asks the sender to retry, the tenants that were delivered are written to the
 * ledger under the body's hash, so the retry sends only the rest. Decompression and routing run on
 * the connection's event loop, which owns a {@link LoopResources}.
 *
 * <p>A request that is its own tenant batch (every series to one tenant and nothing to change:
 * {@link RouteResult#whole()}, or a trusted tenant header) is still read in full, but its batch is
 * the decompressed request itself, and when its body is snappy that body goes to the lane as it
 * came: nothing is encoded or compressed again ({@code relay_requests_forwarded_whole_total}).
 *
 * <p>A PRW 2.0 request is routed into PRW 2.0 tenant requests (each with its own symbols table) or
 * straight into PRW 1.0 ones, as {@link DownstreamProtocol} says the downstream takes; an invalid
 * one is answered 400 with the reader's message. Every answer to a PRW 2.0 sender carries the
 * {@code *-Written} headers ({@link AnswerPolicy#written}).
 */
final class WriteProcessor {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.server");

  private final int maxDecompressedBytes;
  private final int maxDecompressionRatio;
  private final TenantConfig tenants;
  private final Lanes lanes;
  private final DeliveryLedger ledger;
  private final long timeoutNanos;
  private final RelayMetrics metrics;
  private final DownstreamProtocol protocol;
  private final TenantInsight insight;
  private final FastThreadLocal<LoopResources> resources;
  private final ThrottledDropLog throttledLog;

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
    this.protocol = protocol;
    this.insight = insight;
    this.maxDecompressedBytes = maxDecompressedBytes;
    this.maxDecompressionRatio = maxDecompressionRatio;
    this.tenants = tenants;
    this.lanes = lanes;
    this.ledger = ledger;
    this.timeoutNanos = timeout.toNanos();
    this.metrics = metrics;
    this.throttledLog = new ThrottledDropLog(metrics);
    TenantRules rules = tenants.rules();
    boolean digest = insight.enabled();
    // Learned from the series every loop routes; routes PRW 1.0 requests that carry only metadata.
    MetricFamilies families = MetricFamilies.of(rules);
    metrics.metricFamilies(families);
    this.resources =
        new FastThreadLocal<>() {
          @Override
          protected LoopResources initialValue() {
            return new LoopResources(rules, maxDecompressedBytes, digest, families);
          }

          @Override
          protected void onRemoval(LoopResources value) {
            value.close();
          }
        };
  }

  /**
   * One tenant's uncompressed batch of {@code protocol}, before it becomes a fragment.
   *
   * @param whole whether the batch is the request itself, unchanged: its compressed body, when it
   *     is snappy, is the batch's snappy block
   */
  private record Batch(
      String tenant, Protocol protocol, ByteBuf content, SeriesCounts counts, boolean whole) {}

  /**
   * Processes one request.
   *
   * @param body takes ownership; the compressed request body
   * @param reservation the request's share of {@code budget}, holding the compressed body; grown to
   *     hold what the body decompresses to before that is allocated (the caller releases it once
   *     answered)
   * @param input the message the body holds
   * @param incomingTenant value of the tenant header on the request when it is trusted, else {@code
   *     null}
   * @param allowed tenants the request's credentials may write; a series of another one makes the
   *     whole request 403, with nothing delivered
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
      TenantAllowList allowed,
      long startNanos,
      Consumer<Answer> answer) {
    // A PRW 2.0 sender learns what was written from every answer, failures included.
    Consumer<Answer> done = a -> answer.accept(a.forSenderOf(input));
    try {
      processOrThrow(
          loop,
          alloc,
          body,
          budget,
          reservation,
          encoding,
          input,
          incomingTenant,
          allowed,
          startNanos,
          done);
    } catch (RuntimeException | Error e) {
      // Last resort. Memory running out passes; anything else (a bug, a native codec library that
      // failed to load) is worth its stack trace. The sender is answered either way.
      boolean memory = e instanceof OutOfMemoryError;
      metrics.internalError(memory ? "memory" : "exception");
      LOG.log(Level.WARNING, "write request failed inside the relay", e);
      done.accept(
          memory
              ? new Answer(503, "the relay is out of memory for requests; retry later", 5, false)
              : Answer.of(500, "internal error while processing the request"));
    }
  }

  /**
   * {@link #process}, throwing what fails inside the relay once everything the request held is
   * released.
   */
  private void processOrThrow(
      EventLoop loop,
      ByteBufAllocator alloc,
      ByteBuf body,
      InflightBudget budget,
      InflightBudget.Reservation reservation,
      BodyEncoding encoding,
      Protocol input,
      String incomingTenant,
      TenantAllowList allowed,
      long startNanos,
      Consumer<Answer> done) {
    LoopResources res;
    try {
      res = resources.get();
    } catch (RuntimeException | Error e) {
      body.release();
      throw e;
    }
    metrics.received(body.readableBytes());
    ByteBuf decoded = decompress(res, alloc, body, budget, reservation, encoding, done);
    if (decoded == null) {
      return;
    }
    List<Batch> batches = new ArrayList<>();
    try {
      if (incomingTenant != null) {
        String tenant = tenants.incomingTenant(incomingTenant);
        if (tenant == null) {
          decoded.release();
          body.release();
          done.accept(
              Answer.of(
                  400,
                  "the "
                      + tenants.tenantHeader()
                      + " header is not a valid tenant ID (characters a-z A-Z 0-9 ! - _ . * ' ("
                      + " ), at most 150 bytes)"));
          return;
        }
        if (input == Protocol.V1) {
          RequestError error;
          try {
            error = res.counter.count(decoded, alloc);
          } catch (RuntimeException | Error e) {
            decoded.release();
            throw e;
          }
          if (error != null) {
            decoded.release();
            body.release();
            metrics.rejectedSeries("malformed", res.counter.counts().series());
            done.accept(Answer.of(400, error.message()));
            return;
          }
          batches.add(new Batch(tenant, Protocol.V1, decoded, res.counter.counts(), true));
          insight.recordWhole(tenant, res.counter.counts().series(), decoded.readableBytes());
        } else {
          RequestError error = wholeV2(res, alloc, tenant, decoded, batches);
          if (error != null) {
            metrics.rejectedSeries(reason(error), 0);
            body.release();
            done.accept(Answer.of(400, error.message()));
            return;
          }
          Batch whole = batches.get(batches.size() - 1);
          insight.recordWhole(tenant, whole.counts().series(), whole.content().readableBytes());
        }
      } else {
        RouteResult result = null;
        V2TenantRouter v2 =
            input == Protocol.V1
                ? null
                : protocol.forV2Input() == Protocol.V2 ? res.v2Router : res.v2ToV1Router;
        Protocol output = v2 == res.v2Router ? Protocol.V2 : Protocol.V1;
        try {
          result = v2 == null ? res.router.route(decoded, alloc) : v2.route(decoded, alloc);
          RequestError error = result.error();
          if (error != null) {
            metrics.rejectedSeries(reason(error), result.seriesIn());
            body.release();
            done.accept(Answer.of(400, error.message()));
            return;
          }
          metrics.routed(result);
          insight.record(result);
          for (TenantBatch b : result.batches()) {
            if (b.series() == 0 && !allowed.allows(b.tenant())) {
              // Metadata routed by family to a tenant these credentials may not write: dropped
              // (counted), where a series of that tenant would refuse the request.
              metrics.metadataDropped("forbidden_tenant", b.metadata());
              continue;
            }
            if (v2 == null) {
              metrics.tenantMetadataIn(b.tenant(), b.metadata());
            }
            batches.add(new Batch(b.tenant(), output, b.takeContent(), b.counts(), result.whole()));
          }
        } finally {
          if (result != null) {
            result.clear();
          }
          decoded.release();
        }
      }
    } catch (RuntimeException | Error e) {
      // Last resort (an allocation or a codec failing): release what this request holds; the
      // caller answers the sender. Every batch in the list is owned here and released nowhere
      // else before this point (small batches are slices sharing one reference count, so a
      // batch's refCnt() does not tell whether it was released).
      for (Batch b : batches) {
        b.content().release();
      }
      body.release();
      throw e;
    }
    if (refusedTenant(allowed, body, batches, done)) {
      return;
    }
    deliver(loop, body, encoding, input, batches, startNanos, done);
  }

  /**
   * Decompresses the body within the decompressed-size cap, the ratio cap and the memory budget
   * (the reservation grows to the compressed plus the decompressed size before the latter is
   * allocated).
   *
   * @param body borrowed, unless it fails: released then
   * @return the decompressed request (the caller owns it), or {@code null} when the sender was
   *     answered (400 for a body that is invalid or decompresses to too much, 503 when the budget
   *     has no room now, 413 when it never could)
   */
  private ByteBuf decompress(
      LoopResources res,
      ByteBufAllocator alloc,
      ByteBuf body,
      InflightBudget budget,
      InflightBudget.Reservation reservation,
      BodyEncoding encoding,
      Consumer<Answer> done) {
    long compressed = body.readableBytes();
    long byRatio = compressed * maxDecompressionRatio;
    int cap = (int) Math.min(maxDecompressedBytes, byRatio);
    RequestGrant grant = res.grant.reset(budget, reservation, compressed);
    try {
      return encoding == BodyEncoding.SNAPPY
          ? SnappyCodec.decode(body, alloc, cap, grant)
          : res.zstd.decode(body, alloc, cap, grant);
    } catch (RuntimeException | Error e) {
      body.release();
      throw e;
    } catch (CodecException e) {
      body.release();
      String name = encoding.name().toLowerCase(Locale.ROOT);
      Answer answer =
          switch (e.problem()) {
            case OVER_BUDGET -> {
              metrics.inflightRejected(grant.reason());
              yield grant.refusedAnswer();
            }
            case TOO_LARGE ->
                Answer.of(
                    400,
                    "cannot decompress the "
                        + name
                        + " body: "
                        + e.getMessage()
                        + " ("
                        + (cap < maxDecompressedBytes
                            ? ConfigKeys.SERVER_MAX_DECOMPRESSION_RATIO.setTo(maxDecompressionRatio)
                                + " times the "
                                + compressed
                                + "-byte body"
                            : ConfigKeys.SERVER_MAX_DECOMPRESSED_BYTES.setTo(maxDecompressedBytes))
                        + ")");
            case CORRUPT ->
                Answer.of(400, "cannot decompress the " + name + " body: " + e.getMessage());
          };
      done.accept(answer);
      return null;
    } finally {
      grant.clear();
    }
  }

  /**
   * A PRW 2.0 request for one trusted tenant, as a batch in the downstream's protocol: converted to
   * PRW 1.0, or checked and kept whole.
   *
   * @param decoded takes ownership, also when an error is returned
   * @return why the request is invalid, or {@code null} when the batch was added
   */
  private RequestError wholeV2(
      LoopResources res, ByteBufAllocator alloc, String tenant, ByteBuf decoded, List<Batch> out) {
    try {
      if (protocol.forV2Input() == Protocol.V1) {
        V2ToV1Converter.Conversion c = res.v2ToV1.convert(decoded, alloc, res.maxOutputBytes);
        if (c.error() != null) {
          return c.error();
        }
        out.add(new Batch(tenant, Protocol.V1, c.content(), c.counts(), false));
        return null;
      }
      V2Check check = res.v2Check.check(decoded, alloc);
      if (check.error() != null) {
        return check.error();
      }
      out.add(new Batch(tenant, Protocol.V2, decoded.retain(), check.counts(), true));
      return null;
    } finally {
      decoded.release();
    }
  }

  /** The {@code reason} tag of {@code relay_series_rejected_total} for a request's error. */
  private static String reason(RequestError error) {
    return switch (error.kind()) {
      case MALFORMED -> "malformed";
      case NO_TENANT -> "no_tenant";
      case TOO_MANY_TENANTS -> "too_many_tenants";
      case TOO_LARGE -> "too_large";
    };
  }

  /**
   * Answers 403 naming the first tenant of {@code batches} that {@code allowed} does not allow,
   * releasing the body and every batch: nothing of the request is delivered.
   *
   * @param body borrowed; released only when refused
   * @param batches borrowed; every batch's content released only when refused
   * @return whether the request was refused
   */
  private boolean refusedTenant(
      TenantAllowList allowed, ByteBuf body, List<Batch> batches, Consumer<Answer> done) {
    for (Batch b : batches) {
      if (!allowed.allows(b.tenant())) {
        int series = 0;
        for (Batch r : batches) {
          series += r.counts().series();
          r.content().release();
        }
        body.release();
        metrics.authRejected(403);
        metrics.rejectedSeries("forbidden_tenant", series);
        done.accept(TenantAllowList.forbidden(b.tenant()));
        return true;
      }
    }
    return false;
  }

  /**
   * Hands every batch to its lane and answers once all have their outcome. A request that is its
   * own batch, received as snappy, goes to its lane as the body it came in ({@link
   * Fragment#ofBlock}): the downstream is sent the sender's bytes, and nothing is compressed again.
   *
   * @param body takes ownership: kept until the answer when the ledger may need its hash, and
   *     handed to the lane when it is forwarded as it came
   * @param batches takes ownership of every batch's content
   */
  private void deliver(
      EventLoop loop,
      ByteBuf body,
      BodyEncoding encoding,
      Protocol input,
      List<Batch> batches,
      long startNanos,
      Consumer<Answer> done) {
    if (batches.isEmpty()) {
      body.release();
      done.accept(AnswerPolicy.fromResults(List.of()));
      return;
    }
    // The ledger matters only when a request has several tenants: one may be delivered while
    // another fails. The body is hashed now when the ledger may know it, and otherwise only if the
    // answer turns out to ask for a retry, which needs the body kept until then.
    LedgerKey known = null;
    ByteBuf kept = null;
    // The fragment's own reference to the body it forwards, taken before the body may be released.
    ByteBuf forwarded =
        batches.size() == 1 && batches.get(0).whole() && encoding == BodyEncoding.SNAPPY
            ? body.retain()
            : null;
    boolean several = ledger.enabled() && batches.size() > 1;
    if (several && !ledger.isEmpty()) {
      known = LedgerKey.of(body);
    } else if (several || ledger.countsThrottled()) {
      // Hashed only if the answer asks for a retry (or is a 429 whose repeats are counted).
      kept = body;
      body = null;
    }
    if (body != null) {
      body.release();
    }
    LedgerKey key = known;
    ByteBuf keptBody = kept;
    SenderRequest request =
        new SenderRequest(
            loop,
            batches.size(),
            results -> {
              Answer answer = AnswerPolicy.fromResults(results);
              LedgerKey k = key;
              if (answer.status() >= 300 && k == null && keptBody != null) {
                k = LedgerKey.of(keptBody);
              }
              boolean dropped = false;
              if (answer.status() == 429 && ledger.countsThrottled()) {
                DeliveryLedger.Throttling t = ledger.throttled(k);
                if (t.drop()) {
                  answer = AnswerPolicy.throttledDropped(results, t.answers(), t.sinceNanos());
                  throttledLog.dropped(results);
                  dropped = true;
                }
              }
              if (input == Protocol.V2) {
                answer = answer.withWritten(AnswerPolicy.written(results));
              }
              if (answer.status() >= 300 && !dropped && several) {
                remember(k, results);
              }
              if (keptBody != null) {
                keptBody.release();
              }
              done.accept(answer);
            });
    long deadline = startNanos + timeoutNanos;
    List<Fragment> fragments = new ArrayList<>(batches.size());
    int i = 0;
    try {
      for (; i < batches.size(); i++) {
        Batch b = batches.get(i);
        int size = b.content().readableBytes();
        metrics.tenantIn(b.tenant(), b.counts(), size);
        if (key != null && ledger.delivered(key, b.tenant())) {
          metrics.ledgerSkipped(b.tenant(), b.counts());
          request.settled(
              b.tenant(),
              b.counts(),
              new FragmentOutcome(
                  Kind.DELIVERED, 200, "delivered by an earlier attempt of this request", -1, 0));
          b.content().release();
          continue;
        }
        if (forwarded != null) {
          b.content().release();
          fragments.add(
              Fragment.ofBlock(
                  b.tenant(), b.protocol(), forwarded, size, b.counts(), deadline, request));
          forwarded = null;
          metrics.forwardedWhole();
          continue;
        }
        fragments.add(
            new Fragment(b.tenant(), b.protocol(), b.content(), b.counts(), deadline, request));
      }
    } catch (RuntimeException | Error e) {
      // Nothing was handed to a lane yet: every batch not released above is released here.
      // (A forwarded body is the request's only fragment, added last: never among them.)
      for (int j = 0; j < fragments.size(); j++) {
        fragments.get(j).body().release();
      }
      if (forwarded != null) {
        forwarded.release();
      }
      for (int j = i; j < batches.size(); j++) {
        batches.get(j).content().release();
      }
      if (keptBody != null) {
        keptBody.release();
      }
      throw e;
    }
    if (!fragments.isEmpty()) {
      lanes.submit(fragments);
    }
  }

  /**
   * Writes which tenants of a request that the sender will retry were delivered into the ledger.
   */
  private void remember(LedgerKey key, List<SenderRequest.Result> results) {
    List<String> delivered = new ArrayList<>();
    List<String> notDelivered = new ArrayList<>();
    for (SenderRequest.Result r : results) {
      (r.outcome().accepted() ? delivered : notDelivered).add(r.tenant());
    }
    ledger.record(key, delivered, notDelivered);
  }
}
