package io.prwrelay.core.route;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.codec.MemoryGrant;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.remotewrite.AbstractSeriesView;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.remotewrite.SymbolTable;
import io.prwrelay.core.remotewrite.V2RequestReader;
import io.prwrelay.core.remotewrite.V2RequestVisitor;
import io.prwrelay.core.remotewrite.V2SeriesView;
import io.prwrelay.core.wire.ScratchMemory;
import java.util.List;

/**
 * Splits one decompressed PRW 2.0 {@code io.prometheus.write.v2.Request} into one valid request per
 * tenant: PRW 2.0 requests with a minimal symbols table each ({@link V2BatchEncoder.Format#V2}) or
 * PRW 1.0 {@code WriteRequest}s ({@link V2BatchEncoder.Format#V1}) for downstreams that accept only
 * 1.0.
 *
 * <p>The counterpart of {@link TenantRouter} with the same rules, the same {@link RouteResult} and
 * the same request flow ({@link AbstractTenantRouter}): reads and validates with {@link
 * V2RequestReader}, resolves each series' tenant through the byte-keyed {@link TenantTable}, and
 * hands the series to {@link V2BatchEncoder}. Tenant values that fail Cortex's tenant ID rules are
 * treated as missing and counted by {@link TenantProblem}; {@link TenantRules#missing()} decides
 * whether such series go to the default tenant, are dropped, or reject the request. {@link
 * TenantRules#removeLabel()} leaves the deciding label out of the forwarded series (and its symbols
 * out of the table unless still referenced); the prefix applies to the tenant ID only.
 *
 * <p>PRW 2.0 metadata belongs to its series, so it always travels with the series to that series'
 * tenant; {@link TenantRules#metadata()} governs the label-less metadata of PRW 1.0 only. In the
 * result, {@link RouteResult#metadataIn()} counts the series' metadata fields.
 *
 * <p><b>Output bound:</b> the batches of one request may take at most {@code maxOutputBytes}
 * together, and no more than the caller's {@link MemoryGrant} allows. Copying each symbol into
 * every series that references it (PRW 1.0) or into every tenant's table (PRW 2.0) can make them
 * far larger than the request; they are sized before they are allocated, and a request over the
 * bound gets a {@link RequestError.Kind#TOO_LARGE} error and no batch, one the grant refuses {@link
 * RequestError.Kind#OVER_BUDGET}.
 *
 * <p><b>Allocation:</b> a tenant value is looked up once per request per value symbol (series of
 * one tenant share the symbol), and once seen allocates nothing; the per-series and per-symbol
 * arrays grow in a {@link ScratchMemory}, which charges a large request for them and gives them
 * back after it. Per request: one pooled heap buffer per tenant batch. Not thread-safe: one router
 * per event loop thread.
 */
public final class V2TenantRouter extends AbstractTenantRouter implements V2RequestVisitor {
  /**
   * {@link #slotOrProblem} when the series' tenant would exceed {@link
   * TenantRules#maxTenantsPerRequest()}; distinct from every table answer and slot.
   */
  private static final int OVER_LIMIT = Integer.MIN_VALUE + 1;

  private final V2BatchEncoder.Format format;
  private final int maxOutputBytes;
  private final V2RequestReader reader;
  private final V2BatchEncoder encoder;
  // Per request: value symbol -> its series' batch slot (>= 0), or the table's problem (< 0).
  private final RequestIntMap symbolSlots;

  /**
   * @param rules how tenants are found
   * @param format the protocol of the batches the router writes
   * @param maxOutputBytes most bytes the batches of one request may take together ({@code
   *     relay.server.max-decompressed-bytes}, at most {@code Integer.MAX_VALUE - 8})
   */
  public V2TenantRouter(TenantRules rules, V2BatchEncoder.Format format, int maxOutputBytes) {
    this(rules, format, maxOutputBytes, false);
  }

  /**
   * @param rules how tenants are found
   * @param format the protocol of the batches the router writes
   * @param maxOutputBytes most bytes the batches of one request may take together ({@code
   *     relay.server.max-decompressed-bytes}, at most {@code Integer.MAX_VALUE - 8})
   * @param digestSeries whether to record each routed series' label set hash and metric name in
   *     {@link RouteResult#digests()} ({@link io.prwrelay.core.remotewrite.LabelSetHasher})
   */
  public V2TenantRouter(
      TenantRules rules, V2BatchEncoder.Format format, int maxOutputBytes, boolean digestSeries) {
    this(rules, format, maxOutputBytes, digestSeries, new ScratchMemory());
  }

  /**
   * @param rules how tenants are found
   * @param format the protocol of the batches the router writes
   * @param maxOutputBytes as above
   * @param digestSeries as above
   * @param scratch where the reader's, the encoder's and the router's per-request arrays grow
   */
  public V2TenantRouter(
      TenantRules rules,
      V2BatchEncoder.Format format,
      int maxOutputBytes,
      boolean digestSeries,
      ScratchMemory scratch) {
    super(rules, digestSeries);
    this.format = format;
    this.maxOutputBytes = maxOutputBytes;
    this.reader = new V2RequestReader(rules.labels(), scratch);
    this.encoder = new V2BatchEncoder(scratch);
    this.symbolSlots = new RequestIntMap(256, scratch);
  }

  public TenantRules rules() {
    return rules;
  }

  /** The protocol of the batches this router writes. */
  public V2BatchEncoder.Format format() {
    return format;
  }

  /**
   * Routes one request.
   *
   * @param request borrowed; the decompressed PRW 2.0 request between its reader and writer index.
   *     Read in place when it has a backing array, otherwise copied once into a temporary heap
   *     buffer.
   * @param alloc allocator for the batch buffers (and the temporary copy)
   * @return this router's reused result, valid until the next call; the previous result is cleared
   *     first. Each batch's content is a complete request in {@link #format()}.
   */
  @Override
  public RouteResult route(ByteBuf request, ByteBufAllocator alloc) {
    return routeRequest(request, alloc, MemoryGrant.UNLIMITED);
  }

  @Override
  void startRequest() {
    symbolSlots.clear();
  }

  @Override
  RequestError read(byte[] array, int offset, int length) {
    SymbolTable symbols = reader.symbols();
    encoder.reset(array, symbols);
    // Gates may be asked for any series: the symbols' hashes start anew either way (lazily).
    hasher.startRequest(symbols);
    return reader.read(array, offset, length, this);
  }

  @Override
  int openSlot() {
    return encoder.openSlot();
  }

  @Override
  RequestError encode(
      String[] tenants, ByteBufAllocator alloc, MemoryGrant grant, List<TenantBatch> batches) {
    return encoder.encode(format, tenants, alloc, maxOutputBytes, grant, batches);
  }

  @Override
  boolean whole() {
    // A PRW 1.0 batch is a conversion: never the request itself.
    return format == V2BatchEncoder.Format.V2
        && reader.otherFields() == 0
        && encoder.keepsWholeRequest(result.seriesIn);
  }

  @Override
  void encodeWhole(String tenant, ByteBuf request, List<TenantBatch> batches) {
    encoder.encodeWhole(tenant, request, batches);
  }

  @Override
  public boolean onSeries(V2SeriesView series) {
    result.seriesIn++;
    result.metadataIn += series.metadata();
    int problem;
    if (series.tenantLabel() == V2SeriesView.NO_TENANT_LABEL) {
      problem = TenantProblem.MISSING.ordinal();
    } else {
      int slot = slotOrProblem(series);
      if (slot >= 0) {
        add(slot, series, removeLabel);
        return true;
      }
      if (slot == OVER_LIMIT) {
        return false; // the request's error is set
      }
      problem = TenantTable.problemOf(slot);
    }
    int slot = unresolved(problem, series);
    if (slot >= 0) {
      add(slot, series, false);
    }
    return slot != REJECT;
  }

  /** Adds a series to {@code slot}'s batch unless its tenant's series limit leaves it out. */
  private void add(int slot, V2SeriesView series, boolean remove) {
    SeriesLimits.Gate gate = gates[slot];
    if (digest || gate != null) {
      hasher.digest(series);
      if (gate != null && !admitted(slot, gate, series)) {
        return;
      }
    }
    encoder.addSeries(slot, series, remove);
    if (digest) {
      recordDigest(slot, series);
    }
  }

  @Override
  void findName(AbstractSeriesView series) {
    hasher.findName((V2SeriesView) series);
  }

  /**
   * The batch slot of the series' tenant, or the table's (negative) answer when its tenant value is
   * not valid: series of one tenant share the value symbol, so this is one array lookup per series
   * and one table lookup per symbol and request.
   */
  private int slotOrProblem(V2SeriesView series) {
    int ref = series.valueRef();
    int cached = symbolSlots.get(ref);
    if (cached != RequestIntMap.ABSENT) {
      return cached;
    }
    int resolved = slots.resolve(series.array(), series.valueOffset(), series.valueLength());
    if (!TenantTable.isEntry(resolved)) {
      return symbolSlots.put(ref, resolved);
    }
    int slot = slotOf(resolved, series);
    return slot == REJECT ? OVER_LIMIT : symbolSlots.put(ref, slot);
  }
}
