package io.prwrelay.core.route;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.codec.MemoryGrant;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.remotewrite.AbstractSeriesView;
import io.prwrelay.core.remotewrite.LabelSetHasher;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.wire.HeapBuffers;
import io.prwrelay.core.wire.ScratchMemory;
import java.util.List;

/**
 * The steps of routing one request that do not depend on the protocol version, shared by {@link
 * TenantRouter} (PRW 1.0) and {@link V2TenantRouter} (PRW 2.0): the request bytes as an array (in
 * place, or one temporary heap copy), reading with the version's reader, the {@link
 * TenantRules#missing()} policy for a series without a valid tenant, and encoding the batches into
 * the reused {@link RouteResult}.
 *
 * <p>A subclass reads with its reader, calling {@link #slotOf} for a series with a valid tenant and
 * {@link #unresolved} for one without. Not thread-safe: one router per event loop thread.
 */
abstract sealed class AbstractTenantRouter permits TenantRouter, V2TenantRouter {
  /** {@link #unresolved} when the series is dropped. */
  static final int DROP = -1;

  /** {@link #unresolved} when the request is rejected. */
  static final int REJECT = -2;

  final TenantRules rules;
  final TenantSlots slots;
  final RouteResult result = new RouteResult();
  final boolean removeLabel;

  /** Whether each routed series is recorded in {@link RouteResult#digests()}. */
  final boolean digest;

  final LabelSetHasher hasher = new LabelSetHasher();

  /**
   * The per-tenant series limits; {@link SeriesLimits#NONE} unless {@link #limitSeries} set them.
   */
  private SeriesLimits limits = SeriesLimits.NONE;

  /** This request's gate of each batch slot, {@code null} for a tenant without a series limit. */
  SeriesLimits.Gate[] gates = new SeriesLimits.Gate[16];

  private final int maxTenants;
  private final TenantRules.MissingPolicy missing;
  private final String[] labelNames;
  private RequestError rejection;
  private int requestOffset;

  AbstractTenantRouter(TenantRules rules, boolean digest) {
    this.rules = rules;
    this.digest = digest;
    this.slots = new TenantSlots(rules);
    this.removeLabel = rules.removeLabel();
    this.maxTenants = rules.maxTenantsPerRequest();
    this.missing = rules.missing();
    this.labelNames = rules.labels().toArray(new String[0]);
  }

  /**
   * Has every series of a tenant with a {@link SeriesLimits.Gate} pass it before it is added to its
   * batch; a series not admitted is recorded in {@link RouteResult#limited()} instead.
   *
   * @param limits shared by the routers of every event loop
   */
  public final void limitSeries(SeriesLimits limits) {
    this.limits = limits;
  }

  /**
   * Routes one request: {@link #routeRequest} with the version's Javadoc.
   *
   * @param request borrowed
   */
  public abstract RouteResult route(ByteBuf request, ByteBufAllocator alloc);

  /**
   * Routes one request within {@code grant}: {@link #routeRequest}.
   *
   * @param request borrowed
   */
  public final RouteResult route(ByteBuf request, ByteBufAllocator alloc, MemoryGrant grant) {
    return routeRequest(request, alloc, grant);
  }

  /** Forgets what the previous request left in the subclass's per-request state. */
  abstract void startRequest();

  /**
   * Reads the request with the version's reader, which calls back into the subclass per series.
   *
   * @param array borrowed; the request is {@code [offset, offset + length)}
   * @return the reader's error, or {@code null}
   */
  abstract RequestError read(byte[] array, int offset, int length);

  /** Opens the next batch slot in the version's encoder. */
  abstract int openSlot();

  /**
   * Encodes one batch per slot into {@code batches}.
   *
   * @param tenants tenant ID of each slot, borrowed
   * @param grant asked for the batches' bytes before their buffers are allocated
   * @return {@code null}, or why the batches were not built (then none was added)
   */
  abstract RequestError encode(
      String[] tenants, ByteBufAllocator alloc, MemoryGrant grant, List<TenantBatch> batches);

  /**
   * Whether the request just read is its own batch: every series went to one tenant and nothing in
   * the request has to change for it (no series dropped, no label removed, what the version's
   * policy keeps of the rest kept as it is).
   */
  abstract boolean whole();

  /**
   * Adds the one batch of a request that {@link #whole()} said is its own: a retained slice of it.
   *
   * @param request borrowed
   */
  abstract void encodeWhole(String tenant, ByteBuf request, List<TenantBatch> batches);

  /**
   * Routes one request.
   *
   * @param request borrowed; the decompressed request between its reader and writer index. Read in
   *     place when it has a backing array, otherwise copied once into a temporary heap buffer.
   * @param alloc allocator for the batch buffers (and the temporary copy)
   * @param grant asked for the batches' bytes before their buffers are allocated (a request that is
   *     its own batch takes none); the scratch memory's grant is the caller's to set ({@link
   *     io.prwrelay.core.wire.ScratchMemory#start})
   * @return this router's reused result, valid until the next call; the previous result is cleared
   *     first. Its error is {@link RequestError.Kind#OVER_BUDGET} when a grant refused memory for
   *     the batches or for the scratch arrays reading the request needs.
   */
  final RouteResult routeRequest(ByteBuf request, ByteBufAllocator alloc, MemoryGrant grant) {
    result.clear();
    slots.startRequest();
    startRequest();
    rejection = null;
    int length = request.readableBytes();
    ByteBuf heap = HeapBuffers.heap(request, alloc);
    try {
      byte[] array = heap.array();
      int offset = HeapBuffers.arrayStart(heap);
      requestOffset = offset;
      RequestError error;
      try {
        error = read(array, offset, length);
      } catch (ScratchMemory.Refused e) {
        error = RequestError.overBudget("reading this request into tenant batches");
      }
      if (error == null) {
        error = rejection;
      }
      if (error != null) {
        result.error = error;
        return result;
      }
      try {
        if (whole()) {
          // Nothing to splice: the batch is the request (no copy), and a caller holding the
          // request's compressed body may send that as it came (RouteResult#whole()).
          result.whole = true;
          encodeWhole(slots.tenants()[0], request, result.batches);
        } else {
          result.error = encode(slots.tenants(), alloc, grant, result.batches);
        }
      } catch (ScratchMemory.Refused e) {
        result.clear();
        result.error = RequestError.overBudget("encoding this request's tenant batches");
      } catch (RuntimeException | Error e) {
        result.clear();
        throw e;
      }
      return result;
    } finally {
      if (heap != request) {
        heap.release();
      }
    }
  }

  /**
   * The batch slot of a tenant table entry in this request, opened on its first series; {@link
   * #REJECT} when that would open more slots than {@link TenantRules#maxTenantsPerRequest()} (then
   * the request's error is set and reading should stop).
   */
  final int slotOf(int entry, AbstractSeriesView series) {
    int slot = slots.slotOf(entry);
    if (slot != RequestIntMap.ABSENT) {
      return slot;
    }
    if (slots.opened() >= maxTenants) {
      rejection =
          new RequestError(
              RequestError.Kind.TOO_MANY_TENANTS,
              "timeseries[" + series.index() + "]",
              series.start() - requestOffset,
              "the request carries more than "
                  + maxTenants
                  + " tenants (relay.tenant.max-per-request); split it into smaller requests");
      return REJECT;
    }
    slot = slots.open(entry, openSlot());
    if (slot >= gates.length) {
      gates = java.util.Arrays.copyOf(gates, Math.max(slot + 1, gates.length * 2));
    }
    gates[slot] = limits.gate(slots.tenants()[slot]);
    return slot;
  }

  /**
   * Whether the series just {@link #hasher digested} may join {@code slot}'s batch: always when the
   * slot's tenant has no gate; otherwise its gate decides, and a series it refuses is recorded in
   * {@link RouteResult#limited()} (with its metric name when {@link SeriesDigests#samplesName} says
   * so).
   */
  final boolean admitted(int slot, SeriesLimits.Gate gate, AbstractSeriesView series) {
    long hash = hasher.hash();
    if (gate.admit(hash)) {
      return true;
    }
    if (SeriesDigests.samplesName(hash)) {
      findName(series);
      result.limited.add(slot, hash, series.array(), hasher.nameOffset(), hasher.nameLength());
    } else {
      result.limited.add(slot, hash);
    }
    return false;
  }

  /**
   * Records the series the {@link #hasher} just digested as one of {@code slot}, with its metric
   * name when {@link SeriesDigests#samplesName} says so (the name found then, by {@link
   * #findName}).
   */
  final void recordDigest(int slot, AbstractSeriesView series) {
    long hash = hasher.hash();
    if (SeriesDigests.samplesName(hash)) {
      findName(series);
      result.digests.add(slot, hash, series.array(), hasher.nameOffset(), hasher.nameLength());
    } else {
      result.digests.add(slot, hash);
    }
  }

  /** Has the {@link #hasher} find the metric name of the series it just digested. */
  abstract void findName(AbstractSeriesView series);

  /**
   * Applies {@link TenantRules#missing()} to a series without a valid tenant and counts it.
   *
   * @param problem the {@link TenantProblem} ordinal
   * @return the default tenant's slot, {@link #DROP}, or {@link #REJECT} (then the request's error
   *     is set and reading should stop)
   */
  final int unresolved(int problem, AbstractSeriesView series) {
    switch (missing) {
      case DEFAULT:
        result.defaulted[problem]++;
        return slotOf(TenantTable.DEFAULT_ENTRY, series);
      case DROP:
        result.dropped[problem]++;
        return DROP;
      default:
        rejection =
            missingTenant(
                labelNames,
                series.tenantLabel(),
                series.index(),
                series.start() - requestOffset,
                TenantProblem.of(problem));
        return REJECT;
    }
  }

  /**
   * The 400 for a series without a valid tenant under {@code relay.tenant.missing=reject}.
   *
   * @param tenantLabel index in {@code labelNames} of the label whose value was invalid
   * @param offset byte offset of the series in the request
   */
  static RequestError missingTenant(
      String[] labelNames, int tenantLabel, int index, int offset, TenantProblem problem) {
    String what;
    if (problem == TenantProblem.MISSING) {
      what =
          "none of the tenant labels "
              + String.join(", ", labelNames)
              + " is present with a non-empty value";
    } else if (problem == TenantProblem.NOT_ALLOWED) {
      what =
          "the value of tenant label "
              + labelNames[tenantLabel]
              + " is not one of the allowed tenants (not_allowed)";
    } else {
      what =
          "the value of tenant label "
              + labelNames[tenantLabel]
              + " is not a valid tenant ID ("
              + problem.tag()
              + ")";
    }
    return new RequestError(
        RequestError.Kind.NO_TENANT,
        "timeseries[" + index + "]",
        offset,
        what + " and relay.tenant.missing is reject");
  }
}
