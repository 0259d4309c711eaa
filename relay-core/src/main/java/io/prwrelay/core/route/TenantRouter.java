package io.prwrelay.core.route;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.encode.BatchEncoder;
import io.prwrelay.core.remotewrite.Bytes;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.remotewrite.SeriesView;
import io.prwrelay.core.remotewrite.WriteRequestReader;
import io.prwrelay.core.remotewrite.WriteRequestVisitor;
import java.util.Arrays;

/**
 * Splits one decompressed PRW 1.0 {@code WriteRequest} into one valid {@code WriteRequest} per
 * tenant.
 *
 * <p>Reads with {@link WriteRequestReader} (labels only, until the tenant is resolved), resolves
 * each series' tenant through a byte-keyed {@link TenantTable}, and splices the series' raw bytes
 * into its tenant's batch with {@link BatchEncoder}. Tenant values that fail Cortex's tenant ID
 * rules are treated as missing and counted by {@link TenantProblem}; {@link TenantRules#missing()}
 * decides whether such series go to the default tenant, are dropped, or reject the request.
 *
 * <p><b>Allocation:</b> once a tenant value has been seen (and the scratch arrays have grown to the
 * request size), routing allocates nothing per series or per label; per request it allocates the
 * reader's {@code CodedInputStream} and one pooled buffer per tenant batch. A new tenant value
 * costs one {@code byte[]} and one {@code String}, once; at most {@link
 * TenantRules#maxCachedTenants()} values are remembered before the table starts over.
 *
 * <p>Not thread-safe: one router per event loop thread.
 */
public final class TenantRouter implements WriteRequestVisitor {
  private final TenantRules rules;
  private final WriteRequestReader reader;
  private final TenantTable table;
  private final BatchEncoder encoder = new BatchEncoder();
  private final RouteResult result = new RouteResult();
  private final boolean removeLabel;
  private final TenantRules.MissingPolicy missing;
  private final String[] labelNames;

  // Per request: table entry -> slot, valid when the entry's stamp equals the request's.
  private int[] entrySlot = new int[64];
  private int[] entryStamp = new int[64];
  private int stamp;
  private String[] slotTenants = new String[16];
  private RequestError rejection;
  // The last tenant value resolved in this request (offsets into the request array) and its slot.
  private int lastSlot;
  private int lastValueOffset;
  private int lastValueLength;
  private int requestOffset;

  public TenantRouter(TenantRules rules) {
    this.rules = rules;
    this.reader = new WriteRequestReader(rules.labels());
    this.table = new TenantTable(rules.prefix(), rules.defaultTenantId(), 64);
    this.removeLabel = rules.removeLabel();
    this.missing = rules.missing();
    this.labelNames = rules.labels().toArray(new String[0]);
  }

  /**
   * Routes one request.
   *
   * @param request borrowed; the decompressed request between its reader and writer index. Read in
   *     place when it has a backing array, otherwise copied once into a temporary heap buffer.
   * @param alloc allocator for the batch buffers (and the temporary copy)
   * @return this router's reused result, valid until the next call; the previous result is cleared
   *     first
   */
  public RouteResult route(ByteBuf request, ByteBufAllocator alloc) {
    result.clear();
    if (table.size() >= rules.maxCachedTenants()) {
      table.clear();
    }
    if (++stamp == 0) {
      Arrays.fill(entryStamp, 0);
      stamp = 1;
    }
    rejection = null;
    lastSlot = -1;
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
      encoder.reset(array);
      RequestError error = reader.read(array, offset, length, this);
      if (error == null) {
        error = rejection;
      }
      if (error != null) {
        result.error = error;
        return result;
      }
      boolean withMetadata = rules.metadata() == TenantRules.MetadataPolicy.BROADCAST;
      if (withMetadata
          && encoder.metadataBytes() * encoder.slots() > rules.maxBroadcastMetadataBytes()) {
        withMetadata = false;
        result.metadataDropped = result.metadataIn;
      }
      try {
        encoder.encode(slotTenants, withMetadata, alloc, result.batches);
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
  public boolean onSeries(SeriesView series) {
    result.seriesIn++;
    int problem;
    if (series.tenantLabel() == SeriesView.NO_TENANT_LABEL) {
      problem = TenantProblem.MISSING.ordinal();
    } else {
      byte[] a = series.array();
      int at = series.valueOffset();
      int length = series.valueLength();
      // Series of one target arrive together: the previous series' value is the likeliest match.
      if (lastSlot >= 0 && Bytes.equalsAt(a, at, length, a, lastValueOffset, lastValueLength)) {
        encoder.addSeries(lastSlot, series, removeLabel);
        return true;
      }
      int resolved = table.resolve(a, at, length);
      if (TenantTable.isEntry(resolved)) {
        int slot = slotOf(resolved);
        lastSlot = slot;
        lastValueOffset = at;
        lastValueLength = length;
        encoder.addSeries(slot, series, removeLabel);
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

  @Override
  public void onMetadata(int start, int end) {
    result.metadataIn++;
    encoder.addMetadata(start, end);
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

  private RequestError reject(SeriesView series, TenantProblem problem) {
    return missingTenant(
        labelNames, series.tenantLabel(), series.index(), series.start() - requestOffset, problem);
  }

  /**
   * The 400 for a series without a valid tenant under {@code relay.tenant.missing=reject}, shared
   * by the v1 and v2 routers.
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
