package io.prwrelay.core.route;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.remotewrite.SymbolTable;
import io.prwrelay.core.remotewrite.V2RequestReader;
import io.prwrelay.core.remotewrite.V2RequestVisitor;
import io.prwrelay.core.remotewrite.V2SeriesView;
import java.util.Arrays;

/**
 * Splits one decompressed PRW 2.0 {@code io.prometheus.write.v2.Request} into one valid request per
 * tenant: PRW 2.0 requests with a minimal symbols table each ({@link V2BatchEncoder.Format#V2}) or
 * PRW 1.0 {@code WriteRequest}s ({@link V2BatchEncoder.Format#V1}) for downstreams that accept only
 * 1.0.
 *
 * <p>The counterpart of {@link TenantRouter} with the same rules and the same {@link RouteResult}:
 * reads and validates with {@link V2RequestReader}, resolves each series' tenant through the
 * byte-keyed {@link TenantTable}, and hands the series to {@link V2BatchEncoder}. Tenant values
 * that fail Cortex's tenant ID rules are treated as missing and counted by {@link TenantProblem};
 * {@link TenantRules#missing()} decides whether such series go to the default tenant, are dropped,
 * or reject the request. {@link TenantRules#removeLabel()} leaves the deciding label out of the
 * forwarded series (and its symbols out of the table unless still referenced); the prefix applies
 * to the tenant ID only.
 *
 * <p>PRW 2.0 metadata belongs to its series, so it always travels with the series to that series'
 * tenant; {@link TenantRules#metadata()} governs the label-less metadata of PRW 1.0 only. In the
 * result, {@link RouteResult#metadataIn()} counts the series' metadata fields.
 *
 * <p><b>Allocation:</b> a tenant value is looked up once per request per value symbol (series of
 * one tenant share the symbol), and once seen allocates nothing; scratch arrays grow to the largest
 * request seen. Per request: one pooled buffer per tenant batch. Not thread-safe: one router per
 * event loop thread.
 */
public final class V2TenantRouter implements V2RequestVisitor {
  private static final int UNRESOLVED = Integer.MIN_VALUE;

  private final TenantRules rules;
  private final V2BatchEncoder.Format format;
  private final V2RequestReader reader;
  private final TenantTable table;
  private final V2BatchEncoder encoder = new V2BatchEncoder();
  private final RouteResult result = new RouteResult();
  private final boolean removeLabel;
  private final TenantRules.MissingPolicy missing;
  private final String[] labelNames;

  // Per request: table entry -> slot, valid when the entry's stamp equals the request's.
  private int[] entrySlot = new int[64];
  private int[] entryStamp = new int[64];
  // Per request: value symbol -> what TenantTable.resolve returned for it, same stamp.
  private int[] symbolResolved = new int[256];
  private int[] symbolStamp = new int[256];
  private int stamp;
  private String[] slotTenants = new String[16];
  private RequestError rejection;
  private int requestOffset;

  /**
   * @param rules how tenants are found
   * @param format the protocol of the batches the router writes
   */
  public V2TenantRouter(TenantRules rules, V2BatchEncoder.Format format) {
    this.rules = rules;
    this.format = format;
    this.reader = new V2RequestReader(rules.labels());
    this.table = new TenantTable(rules.prefix(), rules.defaultTenantId(), 64);
    this.removeLabel = rules.removeLabel();
    this.missing = rules.missing();
    this.labelNames = rules.labels().toArray(new String[0]);
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
  public RouteResult route(ByteBuf request, ByteBufAllocator alloc) {
    result.clear();
    if (table.size() >= rules.maxCachedTenants()) {
      table.clear();
    }
    if (++stamp == Integer.MAX_VALUE) {
      Arrays.fill(entryStamp, 0);
      Arrays.fill(symbolStamp, 0);
      stamp = 1;
    }
    rejection = null;
    int length = request.readableBytes();
    ByteBuf heap = null;
    try {
      byte[] array;
      int offset;
      if (request.hasArray()) {
        array = request.array();
        offset = request.arrayOffset() + request.readerIndex();
      } else {
        heap = alloc.heapBuffer(length, length);
        heap.writeBytes(request, request.readerIndex(), length);
        array = heap.array();
        offset = heap.arrayOffset();
      }
      requestOffset = offset;
      SymbolTable symbols = reader.symbols();
      encoder.reset(array, symbols);
      RequestError error = reader.read(array, offset, length, this);
      if (error == null) {
        error = rejection;
      }
      if (error != null) {
        result.error = error;
        return result;
      }
      try {
        encoder.encode(format, slotTenants, alloc, result.batches);
      } catch (RuntimeException | Error e) {
        result.clear();
        throw e;
      }
      return result;
    } finally {
      if (heap != null) {
        heap.release();
      }
    }
  }

  @Override
  public boolean onSeries(V2SeriesView series) {
    result.seriesIn++;
    result.metadataIn += series.metadata();
    int problem;
    if (series.tenantLabel() == V2SeriesView.NO_TENANT_LABEL) {
      problem = TenantProblem.MISSING.ordinal();
    } else {
      int resolved = resolve(series);
      if (TenantTable.isEntry(resolved)) {
        encoder.addSeries(slotOf(resolved), series, removeLabel);
        return true;
      }
      problem = TenantTable.problemOf(resolved);
    }
    switch (missing) {
      case DEFAULT:
        result.defaulted[problem]++;
        encoder.addSeries(slotOf(TenantTable.DEFAULT_ENTRY), series, false);
        return true;
      case DROP:
        result.dropped[problem]++;
        return true;
      default:
        rejection = reject(series, TenantProblem.of(problem));
        return false;
    }
  }

  /** The table's answer for the series' tenant value, looked up once per value symbol. */
  private int resolve(V2SeriesView series) {
    int ref = series.valueRef();
    if (ref >= symbolStamp.length) {
      int n = Math.max(ref + 1, symbolStamp.length * 2);
      symbolStamp = Arrays.copyOf(symbolStamp, n);
      symbolResolved = Arrays.copyOf(symbolResolved, n);
    }
    if (symbolStamp[ref] == stamp) {
      return symbolResolved[ref];
    }
    int resolved = table.resolve(series.array(), series.valueOffset(), series.valueLength());
    symbolStamp[ref] = stamp;
    symbolResolved[ref] = resolved;
    return resolved;
  }

  private int slotOf(int entry) {
    if (entry >= entryStamp.length) {
      int n = Math.max(entry + 1, entryStamp.length * 2);
      entryStamp = Arrays.copyOf(entryStamp, n);
      entrySlot = Arrays.copyOf(entrySlot, n);
    }
    if (entryStamp[entry] == stamp) {
      return entrySlot[entry];
    }
    int slot = encoder.openSlot();
    if (slot == slotTenants.length) {
      slotTenants = Arrays.copyOf(slotTenants, slot * 2);
    }
    slotTenants[slot] = table.id(entry);
    entryStamp[entry] = stamp;
    entrySlot[entry] = slot;
    return slot;
  }

  private RequestError reject(V2SeriesView series, TenantProblem problem) {
    return TenantRouter.missingTenant(
        labelNames, series.tenantLabel(), series.index(), series.start() - requestOffset, problem);
  }
}
