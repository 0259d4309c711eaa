package io.prwrelay.server.write;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.encode.V2ToV1Converter;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.SeriesDigests;
import io.prwrelay.server.config.TenantConfig;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.insight.TenantInsight;
import io.prwrelay.server.lane.Fragment;
import io.prwrelay.server.limits.TenantLimits;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.protocol.Protocol;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The second stage of a write request ({@link WriteProcessor}): reads the decompressed request
 * (labels only) into one batch per tenant, or refuses it. The batches' protocol is chosen once, up
 * front: PRW 1.0 for PRW 1.0 input, and for PRW 2.0 input what {@link DownstreamProtocol} says the
 * downstream takes now (PRW 2.0 tenant requests, each with its own symbols table, or PRW 1.0 ones).
 *
 * <p>With a trusted tenant header the request is that tenant's batch, whole: a PRW 1.0 request is
 * counted and sent as it is, a PRW 2.0 one checked and sent as it is, or converted to PRW 1.0.
 * Otherwise the loop's router for the two protocols ({@link LoopResources#router}) splits it, and
 * the routed request is told to the tenant insight. A request whose series all go to one tenant
 * with nothing to change is that tenant's batch whole ({@link RouteResult#whole()}).
 *
 * <p><b>Memory.</b> The batches are sized before they are written, and their bytes are reserved in
 * the memory budget through the request's {@link RequestGrant} before they are allocated; so is
 * what the loop's scratch arrays ({@link LoopResources#scratch}) grow beyond the bytes the loop
 * keeps between requests, and the arrays go back to their initial sizes after a request that grew
 * them beyond that. When the budget refuses, nothing of that size was allocated: 503 with {@code
 * Retry-After} when the memory is in use now, 413 naming the key when the request could never fit
 * in one client's share (counted in {@code relay_inflight_rejected_total}).
 *
 * <p>Refused, with nothing delivered: 400 for a tenant header that is not a valid tenant ID and for
 * an invalid request (the reader's message; its series counted in {@code
 * relay_series_rejected_total}), 403 naming the first tenant the request's credentials may not
 * write, 503/413 as above. Metadata routed by its family to such a tenant is dropped instead
 * (counted). A refused request is decided before anything shared is recorded: it changes no insight
 * row, no per-tenant metric and no learned metric family.
 */
final class RouteStage {
  private final TenantConfig tenants;
  private final DownstreamProtocol protocol;
  private final RelayMetrics metrics;
  private final TenantInsight insight;

  /** The per-tenant limits, told what the series limits left out; {@code null} when none. */
  private volatile TenantLimits limits;

  /**
   * @param protocol the Remote Write version PRW 2.0 input is sent downstream in
   * @param insight told every routed request
   */
  RouteStage(
      TenantConfig tenants,
      DownstreamProtocol protocol,
      RelayMetrics metrics,
      TenantInsight insight) {
    this.tenants = tenants;
    this.protocol = protocol;
    this.metrics = metrics;
    this.insight = insight;
  }

  /** Tells {@code limits} the names of the series their series limits left out. */
  void limits(TenantLimits limits) {
    this.limits = limits;
  }

  /**
   * Routes one request.
   *
   * @param res the loop's routers, converter and checks
   * @param decoded takes ownership; the decompressed request
   * @param input the Remote Write version of the request
   * @param incomingTenant value of the tenant header on the request when it is trusted, else {@code
   *     null}
   * @param allowed tenants the request's credentials may write
   * @param sender who sent it: a PRW 1.0 request teaches, and its metadata is routed by, the
   *     families this sender sent series of
   * @param grant the request's memory grant: asked for the batches and the scratch memory before
   *     they are allocated
   * @return the batches, whose contents the caller owns; or the refusal, with nothing of the
   *     request left held here
   */
  Routed route(
      LoopResources res,
      ByteBufAllocator alloc,
      ByteBuf decoded,
      Protocol input,
      String incomingTenant,
      TenantAllowList allowed,
      SenderKey sender,
      RequestGrant grant) {
    Protocol output = input == Protocol.V1 ? Protocol.V1 : protocol.forV2Input();
    List<Fragment> batches = new ArrayList<>();
    res.scratch.start(grant.scratch());
    try {
      Routed routed =
          incomingTenant != null
              ? whole(res, alloc, decoded, input, output, incomingTenant, allowed, grant, batches)
              : split(
                  res.router(input, output),
                  alloc,
                  decoded,
                  input,
                  output,
                  allowed,
                  sender,
                  grant,
                  batches);
      if (routed instanceof Routed.Batches) {
        return routed;
      }
      release(batches);
      return routed;
    } catch (RuntimeException | Error e) {
      // Last resort (an allocation or a codec failing): the caller answers the sender. Every batch
      // in the list is owned here and released nowhere else before this point (small batches are
      // slices sharing one reference count, so a batch's refCnt() does not tell whether it was
      // released).
      release(batches);
      throw e;
    } finally {
      decoded.release();
      res.scratch.finish();
    }
  }

  /**
   * The request as the trusted tenant's one batch in {@code output}, added to {@code out}.
   *
   * @param decoded borrowed; retained by a batch that is the request itself
   * @return the refusal, or the batches ({@code out})
   */
  private Routed whole(
      LoopResources res,
      ByteBufAllocator alloc,
      ByteBuf decoded,
      Protocol input,
      Protocol output,
      String incomingTenant,
      TenantAllowList allowed,
      RequestGrant grant,
      List<Fragment> out) {
    String tenant = tenants.incomingTenant(incomingTenant);
    if (tenant == null) {
      return new Refusal(
          Answer.of(
              400,
              "the "
                  + tenants.tenantHeader()
                  + " header is not a valid tenant ID (characters a-z A-Z 0-9 ! - _ . * ' ( ),"
                  + " at most 150 bytes)"));
    }
    if (input == Protocol.V1) {
      RequestError error = res.counter.count(decoded, alloc);
      if (error != null) {
        return invalid("malformed", res.counter.counts().series(), error);
      }
      out.add(Fragment.unbound(tenant, Protocol.V1, decoded.retain(), res.counter.counts()));
    } else if (output == Protocol.V1) {
      V2ToV1Converter.Conversion c =
          res.v2ToV1.convert(decoded, alloc, res.maxOutputBytes, grant.output());
      if (c.error() != null) {
        return refuse(c.error(), 0, grant);
      }
      out.add(Fragment.unbound(tenant, Protocol.V1, c.content(), c.counts()));
    } else {
      V2Check check = res.v2Check.check(decoded, alloc);
      if (check.error() != null) {
        return refuse(check.error(), 0, grant);
      }
      out.add(Fragment.unbound(tenant, Protocol.V2, decoded.retain(), check.counts()));
    }
    Refusal refusal = forbidden(allowed, out);
    if (refusal != null) {
      return refusal;
    }
    Fragment batch = out.get(0);
    insight.recordWhole(tenant, batch.series(), batch.size());
    // The converted request is a new one; the others are the request itself.
    return new Routed.Batches(out, !(input == Protocol.V2 && output == Protocol.V1));
  }

  /**
   * The request split by tenant with {@code router}, one batch in {@code output} per tenant added
   * to {@code out}.
   *
   * @param decoded borrowed
   * @return the refusal, or the batches ({@code out})
   */
  private Routed split(
      LoopResources.Router router,
      ByteBufAllocator alloc,
      ByteBuf decoded,
      Protocol input,
      Protocol output,
      TenantAllowList allowed,
      SenderKey sender,
      RequestGrant grant,
      List<Fragment> out) {
    RouteResult result = router.route(decoded, alloc, allowed, sender.id(), grant.output());
    try {
      RequestError error = result.error();
      if (error != null) {
        return refuse(error, result.seriesIn(), grant);
      }
      // Decided before anything shared is recorded: a refused request changes no insight row,
      // tenant metric or learned family (the router taught nothing either).
      Refusal refusal = forbiddenSeries(allowed, result.batches());
      if (refusal != null) {
        return refusal;
      }
      metrics.routed(result);
      insight.record(result);
      List<TenantBatch> batches = result.batches();
      List<LimitedSeries> limited =
          result.limited().count() == 0 ? List.of() : limited(result, batches);
      for (int i = 0; i < batches.size(); i++) {
        TenantBatch b = batches.get(i);
        if (b.series() == 0 && b.metadata() == 0) {
          continue; // every series left out by the tenant's series limit: nothing to send
        }
        if (b.series() == 0 && !allowed.allows(b.tenant())) {
          // Metadata routed by family to a tenant these credentials may not write: dropped
          // (counted), where a series of that tenant would refuse the request.
          metrics.metadataDropped("forbidden_tenant", b.metadata());
          continue;
        }
        if (input == Protocol.V1) {
          metrics.tenantMetadataIn(b.tenant(), b.metadata());
        }
        out.add(
            Fragment.unbound(
                b.tenant(),
                output,
                b.takeContent(),
                b.series(),
                b.samples(),
                b.exemplars(),
                b.histograms()));
      }
      return new Routed.Batches(out, result.whole(), limited);
    } finally {
      result.clear();
    }
  }

  /**
   * The tenants whose series limit left series of {@code result} out, each counted in {@code
   * relay_tenant_series_limited_total{reason="max_series"}} and its sampled metric names told to
   * the limits for the tenants page.
   */
  private List<LimitedSeries> limited(RouteResult result, List<TenantBatch> batches) {
    List<LimitedSeries> out = new ArrayList<>();
    SeriesDigests d = result.limited();
    int[] nameCounts = new int[d.nameCount()];
    TenantLimits l = limits;
    for (int slot = 0; slot < batches.size(); slot++) {
      int n = 0;
      for (int e = d.first(slot); e != SeriesDigests.END; e = d.next(e)) {
        n++;
        if (d.name(e) >= 0) {
          nameCounts[d.name(e)]++;
        }
      }
      if (n == 0) {
        continue;
      }
      String tenant = batches.get(slot).tenant();
      metrics.tenantLimited(tenant, "max_series", n);
      out.add(new LimitedSeries(tenant, n, l == null ? 0 : l.limitsOf(tenant).maxSeries()));
      if (l != null) {
        for (int name = 0; name < nameCounts.length; name++) {
          if (nameCounts[name] > 0) {
            l.limitedName(
                tenant,
                new String(
                    d.nameBytes(), d.nameOffset(name), d.nameLength(name), StandardCharsets.UTF_8),
                nameCounts[name]);
            nameCounts[name] = 0;
          }
        }
      }
    }
    return out;
  }

  /**
   * The refusal of a request that could not be routed: the budget's answer when {@code grant}
   * refused its memory, else {@link #invalid}.
   */
  private Refusal refuse(RequestError error, int series, RequestGrant grant) {
    if (error.kind() == RequestError.Kind.OVER_BUDGET) {
      metrics.inflightRejected(grant.reason());
      return new Refusal(grant.refusedAnswer());
    }
    return invalid(reason(error), series, error);
  }

  /** A 400 with the reader's message, its {@code series} counted as rejected for {@code reason}. */
  /**
   * How the router's 400 under {@code relay.tenant.missing=reject} begins when the series carried
   * none of the tenant labels (rather than a value that is invalid or not allowed).
   */
  private static final String NO_TENANT_LABEL = "none of the tenant labels";

  private Refusal invalid(String reason, int series, RequestError error) {
    metrics.rejectedSeries(reason, series);
    if (error.kind() == RequestError.Kind.NO_TENANT
        && error.problem().startsWith(NO_TENANT_LABEL)) {
      insight.rejectedWithoutTenant(series);
    }
    return new Refusal(Answer.of(400, error.message()));
  }

  /** The {@code reason} tag of {@code relay_series_rejected_total} for a request's error. */
  private static String reason(RequestError error) {
    return switch (error.kind()) {
      case MALFORMED -> "malformed";
      case NO_TENANT -> "no_tenant";
      case TOO_MANY_TENANTS -> "too_many_tenants";
      case TOO_LARGE -> "too_large";
      case OVER_BUDGET -> throw new IllegalArgumentException("not a rejection: " + error);
    };
  }

  /**
   * A 403 naming the first tenant of {@code batches} that {@code allowed} does not allow, with
   * every series of the request counted as rejected; {@code null} when all are allowed.
   */
  private Refusal forbidden(TenantAllowList allowed, List<Fragment> batches) {
    for (int i = 0; i < batches.size(); i++) {
      Fragment b = batches.get(i);
      if (!allowed.allows(b.tenant())) {
        int series = 0;
        for (Fragment r : batches) {
          series += r.series();
        }
        return refuse(b.tenant(), series);
      }
    }
    return null;
  }

  /**
   * A 403 naming the first tenant with series in {@code batches} that {@code allowed} does not
   * allow (metadata alone routed to one is dropped instead), with every series of the request
   * counted as rejected; {@code null} when all are allowed.
   */
  private Refusal forbiddenSeries(TenantAllowList allowed, List<TenantBatch> batches) {
    for (int i = 0; i < batches.size(); i++) {
      TenantBatch b = batches.get(i);
      if (b.series() > 0 && !allowed.allows(b.tenant())) {
        int series = 0;
        for (TenantBatch r : batches) {
          series += r.series();
        }
        return refuse(b.tenant(), series);
      }
    }
    return null;
  }

  private Refusal refuse(String tenant, int series) {
    metrics.authRejected(403);
    metrics.rejectedSeries("forbidden_tenant", series);
    return new Refusal(TenantAllowList.forbidden(tenant));
  }

  private static void release(List<Fragment> batches) {
    for (Fragment b : batches) {
      b.discard();
    }
  }
}
