package io.prwrelay.core.route;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.codec.MemoryGrant;
import io.prwrelay.core.encode.BatchEncoder;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.remotewrite.AbstractSeriesView;
import io.prwrelay.core.remotewrite.Bytes;
import io.prwrelay.core.remotewrite.LabelSetHasher;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.core.remotewrite.SeriesView;
import io.prwrelay.core.remotewrite.WriteRequestReader;
import io.prwrelay.core.remotewrite.WriteRequestVisitor;
import io.prwrelay.core.wire.ScratchMemory;
import java.util.List;
import java.util.function.Predicate;

/**
 * Splits one decompressed PRW 1.0 {@code WriteRequest} into one valid {@code WriteRequest} per
 * tenant.
 *
 * <p>Reads with {@link WriteRequestReader} (labels only, until the tenant is resolved; the rest of
 * a series is skipped by length unless {@link TenantRules#countSamples()} asks for its samples,
 * exemplars and histograms to be counted from their tags), resolves each series' tenant through a
 * byte-keyed {@link TenantTable}, and splices the series' raw bytes into its tenant's batch with
 * {@link BatchEncoder}. Tenant values that fail Cortex's tenant ID rules are treated as missing and
 * counted by {@link TenantProblem}; {@link TenantRules#missing()} decides whether such series go to
 * the default tenant, are dropped, or reject the request.
 *
 * <p><b>Allocation:</b> once a tenant value has been seen (and the scratch arrays have grown to the
 * request size), routing allocates nothing per series or per label; per request it allocates one
 * pooled buffer per large tenant batch and one shared by the small ones ({@link
 * io.prwrelay.core.encode.BatchEncoder#encode}), none for a request that is its own batch (a slice
 * of it: {@link RouteResult#whole()}), and the reader's {@code CodedInputStream} when a field is
 * not encoded the usual way. A new tenant value costs one {@code byte[]} and one {@code String},
 * once; at most {@link TenantRules#maxCachedTenants()} values are remembered before the table
 * starts over.
 *
 * <p><b>Metadata.</b> Under {@link TenantRules.MetadataPolicy#BROADCAST} the request's {@code
 * metadata} fields are copied into every tenant batch, within {@link
 * TenantRules#maxBroadcastMetadataBytes()}. A request with no series left to carry them (Prometheus
 * 2.x sends its metadata alone) has each entry routed by its metric family instead ({@link
 * MetadataRouting}): to the tenants its sender recently sent series of that family to, which every
 * routed series teaches the shared {@link MetricFamilies} ({@link FamilyLearner}: nothing allocated
 * per series; its cost is {@code RouteBenchmark.route} against {@code routeWithoutFamilies}).
 *
 * <p>The request flow and the missing-tenant policy are {@link AbstractTenantRouter}'s, shared with
 * {@link V2TenantRouter}. Not thread-safe: one router per event loop thread.
 */
public final class TenantRouter extends AbstractTenantRouter implements WriteRequestVisitor {
  private final WriteRequestReader reader;
  private final BatchEncoder encoder;
  private final boolean withMetadata;
  private final MetricFamilies families;
  private final FamilyLearner learner;

  private static final Predicate<String> ANY = tenant -> true;

  /**
   * Whether the caller accepts the request routed now ({@link #route(ByteBuf, ByteBufAllocator,
   * Predicate)}).
   */
  private Predicate<String> accepted = ANY;

  /** The size of the request being routed: its batches are charged for what they add beyond it. */
  private int requestLength;

  private final MetadataRouting metadata = new MetadataRouting();
  private byte[] array;
  private long sender = MetricFamilies.NO_SENDER;

  // The last tenant value resolved in this request (offsets into the request array) and its slot.
  private int lastSlot;
  private int lastValueOffset;
  private int lastValueLength;

  /** Whether the series {@link #place} just placed has its tenant label left out. */
  private boolean placedRemoves;

  /** A router with metric families of its own ({@link MetricFamilies#of}). */
  public TenantRouter(TenantRules rules) {
    this(rules, false);
  }

  /**
   * A router with metric families of its own ({@link MetricFamilies#of}).
   *
   * @param digestSeries whether to record each routed series' label set hash and metric name in
   *     {@link RouteResult#digests()} (every label of every series is then walked by tag and
   *     length, and hashed: {@link LabelSetHasher})
   */
  public TenantRouter(TenantRules rules, boolean digestSeries) {
    this(rules, digestSeries, MetricFamilies.of(rules));
  }

  /**
   * @param digestSeries see {@link #TenantRouter(TenantRules, boolean)}
   * @param families which tenants send which metric families: taught from every routed series
   *     (unless it learns nothing), consulted for a request whose metadata has no series to go
   *     with; shared by the routers of every event loop
   */
  public TenantRouter(TenantRules rules, boolean digestSeries, MetricFamilies families) {
    this(rules, digestSeries, families, new ScratchMemory());
  }

  /**
   * @param digestSeries see {@link #TenantRouter(TenantRules, boolean)}
   * @param families see {@link #TenantRouter(TenantRules, boolean, MetricFamilies)}
   * @param scratch where the encoder's per-segment arrays grow
   */
  public TenantRouter(
      TenantRules rules, boolean digestSeries, MetricFamilies families, ScratchMemory scratch) {
    super(rules, digestSeries);
    this.encoder = new BatchEncoder(scratch);
    this.reader = new WriteRequestReader(rules.labels(), rules.countSamples(), digestSeries);
    this.withMetadata = rules.metadata() == TenantRules.MetadataPolicy.BROADCAST;
    this.families = families;
    this.learner = families.enabled() ? new FamilyLearner(families) : null;
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
  @Override
  public RouteResult route(ByteBuf request, ByteBufAllocator alloc) {
    return routeRequest(request, alloc, MemoryGrant.UNLIMITED);
  }

  /**
   * Routes one request of {@code sender} within {@code grant}: its series teach, and its
   * metadata-only entries are routed by, the families this sender sent ({@link MetricFamilies});
   * and it teaches them only when every tenant that got series passes {@code accepted}: a request
   * its sender may not write, refused by the caller, changes nothing shared.
   *
   * @param request borrowed, as for {@link #route(ByteBuf, ByteBufAllocator)}
   * @param sender the sender's id, chosen by the caller and never by the sender
   * @param accepted whether the caller accepts a request with series of this tenant
   * @param grant asked for the batches' bytes before they are allocated
   */
  public RouteResult route(
      ByteBuf request,
      ByteBufAllocator alloc,
      long sender,
      Predicate<String> accepted,
      MemoryGrant grant) {
    this.sender = sender;
    this.accepted = accepted;
    try {
      return routeRequest(request, alloc, grant);
    } finally {
      this.sender = MetricFamilies.NO_SENDER;
      this.accepted = ANY;
    }
  }

  /**
   * {@link #route(ByteBuf, ByteBufAllocator, long, Predicate, MemoryGrant)} of no sender, without a
   * memory bound.
   */
  public RouteResult route(ByteBuf request, ByteBufAllocator alloc, Predicate<String> accepted) {
    return route(request, alloc, MetricFamilies.NO_SENDER, accepted, MemoryGrant.UNLIMITED);
  }

  /** Teaches the families the pairs of the request, when the caller accepts its first tenants. */
  private void learn(String[] tenants, int count) {
    if (learner == null) {
      return;
    }
    for (int i = 0; i < count; i++) {
      if (!accepted.test(tenants[i])) {
        return;
      }
    }
    learner.finish(tenants);
  }

  @Override
  void startRequest() {
    lastSlot = -1;
  }

  @Override
  RequestError read(byte[] array, int offset, int length) {
    this.array = array;
    this.requestLength = length;
    encoder.reset(array);
    metadata.reset();
    if (learner != null) {
      learner.startRequest(array, sender);
    }
    return reader.read(array, offset, length, this);
  }

  @Override
  int openSlot() {
    return encoder.openSlot();
  }

  @Override
  RequestError encode(
      String[] tenants, ByteBufAllocator alloc, MemoryGrant grant, List<TenantBatch> batches) {
    // Every slot open now holds series (metadata routed by family opens its slots below); they
    // teach the families once the batches are built, so that a request refused for its memory
    // teaches nothing either.
    String[] seriesTenants = tenants;
    int seriesSlots = encoder.slots();
    int entries = metadata.count();
    boolean broadcast = false;
    if (entries == 0) {
      // Nothing to place.
    } else if (!withMetadata) {
      result.metadataDropped[MetadataDrop.POLICY.ordinal()] += entries;
    } else if (encoder.slots() == 0) {
      // No series left to carry the metadata (Prometheus 2.x sends it alone): by family.
      metadata.route(array, sender, families, rules, slots, encoder, result);
      tenants = slots.tenants();
    } else if (encoder.metadataBytes() * encoder.slots() > rules.maxBroadcastMetadataBytes()) {
      // Broadcasting would copy more than the cap: the request's metadata is dropped.
      result.metadataDropped[MetadataDrop.MAX_BROADCAST_BYTES.ordinal()] += entries;
    } else {
      broadcast = true;
      result.metadataRouted[MetadataRoute.BROADCAST.ordinal()] += entries;
    }
    // Splicing copies each series once: only metadata grows, under its own bound above. The copy of
    // the request itself is the "as much again" of the budget's sizing rule (the budget is half the
    // memory it may use): what is reserved is what the batches add beyond the request's own size.
    long bytes = encoder.bytes(broadcast);
    long beyond = bytes - requestLength;
    if (beyond > 0 && !grant.reserve(beyond)) {
      return RequestError.overBudget(
          "splitting this request by tenant would take " + bytes + " bytes, more than granted");
    }
    encoder.encode(tenants, broadcast, alloc, batches);
    learn(seriesTenants, seriesSlots);
    return null;
  }

  @Override
  boolean whole() {
    // Metadata is kept when it is broadcast within its cap (for one tenant: its own bytes).
    return encoder.slots() == 1
        && encoder.series(0) == result.seriesIn
        && encoder.rewrites() == 0
        && reader.otherFields() == 0
        && (result.metadataIn == 0
            || (withMetadata && encoder.metadataBytes() <= rules.maxBroadcastMetadataBytes()));
  }

  @Override
  void encodeWhole(String tenant, ByteBuf request, List<TenantBatch> batches) {
    learn(slots.tenants(), 1);
    int entries = metadata.count();
    if (entries > 0) {
      // whole() keeps metadata only when it is broadcast within its cap: to this one tenant.
      result.metadataRouted[MetadataRoute.BROADCAST.ordinal()] += entries;
    }
    encoder.encodeWhole(tenant, request, withMetadata, batches);
  }

  @Override
  public boolean onSeries(SeriesView series) {
    int slot = place(series);
    if (slot < 0) {
      return slot != REJECT;
    }
    SeriesLimits.Gate gate = gates[slot];
    if (digest || gate != null) {
      hasher.digest(series);
      if (gate != null && !admitted(slot, gate, series)) {
        return true;
      }
    }
    encoder.addSeries(slot, series, placedRemoves);
    if (digest) {
      recordDigest(slot, series);
    }
    if (learner != null) {
      learner.see(slot, series);
    }
    return true;
  }

  /**
   * The batch slot of a series: its tenant's, the default tenant's under {@link
   * TenantRules#missing()}, {@link #DROP} or {@link #REJECT}; {@link #placedRemoves} says whether
   * its tenant label is left out when it is added.
   */
  private int place(SeriesView series) {
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
        placedRemoves = removeLabel;
        return lastSlot;
      }
      int resolved = slots.resolve(a, at, length);
      if (TenantTable.isEntry(resolved)) {
        int slot = slotOf(resolved, series);
        if (slot == REJECT) {
          return REJECT;
        }
        lastSlot = slot;
        lastValueOffset = at;
        lastValueLength = length;
        placedRemoves = removeLabel;
        return slot;
      }
      problem = TenantTable.problemOf(resolved);
    }
    placedRemoves = false;
    return unresolved(problem, series);
  }

  @Override
  void findName(AbstractSeriesView series) {
    hasher.findName((SeriesView) series);
  }

  @Override
  public void onMetadata(int start, int end) {
    result.metadataIn++;
    encoder.addMetadata(start, end);
    metadata.add(start, end);
  }
}
