package io.prwrelay.server.config;

import io.prwrelay.core.route.TenantIds;
import io.prwrelay.core.wire.ScratchMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;

/**
 * The heap the relay's long-lived structures that keep bytes a client chose may take, each at its
 * worst, and the rule that makes them fit the heap by construction: one pure function ({@link
 * #plan}) from the configuration, the maximum heap and the event loops to the bounds in effect.
 *
 * <p><b>The share.</b> The structures below together may take at most a third of the maximum heap
 * ({@link #HEAP_SHARE_DIVISOR}). The heap also holds the requests in flight: what a request
 * decompresses to and its tenant batches live on the heap, about twice what {@code
 * relay.server.max-inflight-bytes} admits, and its {@code auto} value is at most a quarter of the
 * heap, so requests take up to half of it (its compressed bodies are direct memory). The last sixth
 * is G1's reserve and young regions at a full collection and what no bound here names (lanes,
 * connections, meters).
 *
 * <p><b>The rule.</b> When the worst cases add up to more than the share, the bounds left at their
 * defaults are lowered together, by one factor, each to no less than its floor (a floor met is held
 * and the factor found again for the others), so that the total fits; bounds set explicitly are
 * kept. What is left over the share (explicit bounds, or floors and fixed parts on a very small
 * heap) is reported as a warning naming the keys set, the total and the heap. Structures without a
 * key (per-loop scratch, the families' filters, the 429 counts) are fixed parts.
 *
 * <table>
 *   <caption>Structures and their worst cases</caption>
 *   <tr><th>structure</th><th>bound (key)</th><th>bytes per unit</th><th>fixed part</th></tr>
 *   <tr><td>insight</td><td>{@code relay.insight.max-tenants}</td><td>105 KiB a tenant</td>
 *       <td>names shown (2 MiB + 16,384 × 72 B), a request's names per router (450 KiB)</td></tr>
 *   <tr><td>tenant_cache</td><td>per router 16 MiB, and {@code relay.tenant.max-cached} × 400 B</td>
 *       <td>a byte, per router, 3 routers per event loop</td>
 *       <td>one request's new tenants before the cache starts over ({@code
 *       relay.tenant.max-per-request} × 400 B per router)</td></tr>
 *   <tr><td>metric_families</td><td>{@code relay.metadata.max-family-bytes}</td><td>a byte</td>
 *       <td>the learners' filters, 4 MiB per event loop</td></tr>
 *   <tr><td>delivery_ledger</td><td>{@code relay.delivery.ledger.max-entries}</td>
 *       <td>330 B a tenant name</td><td>429 counts, 65,536 × 100 B</td></tr>
 *   <tr><td>limits</td><td>{@code relay.limits.max-memory-bytes} (when limits are on)</td>
 *       <td>a byte</td><td></td></tr>
 *   <tr><td>scratch</td><td></td><td></td><td>4 MiB per event loop</td></tr>
 * </table>
 */
public final class RetainedMemory {
  private RetainedMemory() {}

  /** The structures may take the maximum heap divided by this: a third (see the class comment). */
  public static final int HEAP_SHARE_DIVISOR = 3;

  /** Routers per event loop, each with its tenant cache: PRW 1.0, PRW 2.0, PRW 2.0 to 1.0. */
  static final int ROUTERS_PER_LOOP = 3;

  /** One tracked tenant's windows at most ({@code TenantWindow}): 11 HyperLogLogs, samples. */
  static final long INSIGHT_TENANT_BYTES = 105L << 10;

  /** The metric names kept for display ({@code TenantInsight}): 2 MiB and 16,384 × 72 B entries. */
  static final long INSIGHT_NAMES_BYTES = (2L << 20) + 16_384L * 72;

  /** A request's metric names per router ({@code DigestNames}, at most 256 KiB and 4,096 names). */
  static final long DIGEST_NAMES_BYTES = 450L << 10;

  /**
   * One cached tenant value at its longest ({@code TenantTable.ENTRY_BYTES} 96, the value's bytes
   * and the ID's characters, 150 each), rounded up.
   */
  static final long TENANT_VALUE_BYTES = 96 + 2L * TenantIds.MAX_LENGTH + 4;

  /** Each event loop's filter of pairs taught ({@code FamilyLearner}), at its largest. */
  static final long FAMILY_FILTER_BYTES = 4L << 20;

  /** One tenant name of the ledger with its share of the entry ({@code DeliveryLedger}). */
  static final long LEDGER_NAME_BYTES = 330;

  /** The ledger's 429 counts: 65,536 bodies of about 100 bytes ({@code DeliveryLedger}). */
  static final long THROTTLED_COUNTS_BYTES = 65_536L * 100;

  /**
   * Floors: the least a bound left at its default is lowered to, chosen so that the defaults fit
   * the 205 MiB heap the image gives a 512 MiB container with two event loops: 50 tenants in the
   * insight (the most active are kept), 512 KiB of tenant values per router (3,400 of the longest),
   * 2 MiB of families (30,000 associations of short tenant IDs), 5,000 ledger names, 8 MiB of
   * limits.
   */
  static final int MIN_INSIGHT_TENANTS = 50;

  static final long MIN_CACHED_TENANT_BYTES = 512L << 10;
  static final long MIN_FAMILY_BYTES = 2L << 20;
  static final int MIN_LEDGER_ENTRIES = 5_000;
  static final long MIN_LIMITS_BYTES = 8L << 20;

  /**
   * One structure's bound in effect.
   *
   * @param structure the {@code structure} tag of {@code relay_memory_retained_bound_bytes}
   * @param key the key bounding it, or {@code null} for a fixed structure
   * @param value the key's value in effect (entries or bytes), or 0
   * @param bytes the structure's worst case at that value, its fixed part included
   * @param lowered whether the value was lowered from its default to fit the share
   */
  public record Bound(String structure, ConfigKey key, long value, long bytes, boolean lowered) {}

  /**
   * The bounds in effect and whether they fit.
   *
   * @param config the configuration with the bounds in effect
   * @param bounds each structure's, in the order of the class comment's table
   * @param totalBytes their worst cases together
   * @param shareBytes the share of the heap they may take
   * @param maxHeap the maximum heap
   * @param explicitKeys the keys of the bounds set explicitly, kept as set
   */
  public record Plan(
      RelayConfig config,
      List<Bound> bounds,
      long totalBytes,
      long shareBytes,
      long maxHeap,
      List<String> explicitKeys) {

    /** Whether any bound was lowered from its default. */
    public boolean lowered() {
      return bounds.stream().anyMatch(Bound::lowered);
    }

    /** Whether the structures fit their share of the heap. */
    public boolean fits() {
      return totalBytes <= shareBytes;
    }

    /** One line for the startup log naming each structure's bound in effect. */
    public String summary() {
      StringJoiner each = new StringJoiner(", ");
      for (Bound b : bounds) {
        each.add(
            b.structure() + " " + mib(b.bytes()) + setting(b) + (b.lowered() ? " lowered" : ""));
      }
      return "retained memory: "
          + mib(totalBytes)
          + " at most of the "
          + mib(shareBytes)
          + " share (a third of the "
          + mib(maxHeap)
          + " heap)"
          + (lowered() ? ", defaults lowered to fit" : "")
          + ": "
          + each;
    }

    /** A warning when the structures do not fit their share, naming the keys set; else null. */
    public String warning() {
      if (fits()) {
        return null;
      }
      return "retained memory: the long-lived structures may take "
          + mib(totalBytes)
          + ", more than the "
          + mib(shareBytes)
          + " share (a third of the "
          + mib(maxHeap)
          + " heap), so a sender can make the heap run out; "
          + (explicitKeys.isEmpty()
              ? "the bounds are at their floors: give the JVM more heap (-Xmx)"
              : "lower "
                  + String.join(", ", explicitKeys)
                  + " (set explicitly, kept as set) or give the JVM more heap (-Xmx)");
    }
  }

  /** How a bound's value is shown: the key set to it, or the tenant caches' bytes per router. */
  private static String setting(Bound b) {
    if (b.key() == null) {
      return "";
    }
    if (b.bytes() == 0) {
      return " (off)";
    }
    if (b.key() == TenantConfig.MAX_CACHED) {
      return " (" + mib(b.value()) + " per router, up to " + b.key().name() + " values)";
    }
    return " (" + b.key().name() + "=" + b.value() + ")";
  }

  /** One structure while it is planned: a fixed part and a bound scaled in units. */
  private static final class Part {
    final String structure;
    final ConfigKey key;
    final boolean explicit;
    final long unitBytes;
    final long floor;
    final long fixedBytes;
    final long value;
    long planned;

    Part(
        String structure,
        ConfigKey key,
        boolean explicit,
        long value,
        long unitBytes,
        long floor,
        long fixedBytes) {
      this.structure = structure;
      this.key = key;
      this.explicit = explicit;
      this.value = value;
      this.unitBytes = unitBytes;
      this.floor = Math.min(floor, value);
      this.fixedBytes = fixedBytes;
      this.planned = value;
    }

    boolean scalable() {
      return key != null && !explicit && value > floor;
    }

    long bytes() {
      return fixedBytes + planned * unitBytes;
    }
  }

  /**
   * The bounds in effect for {@code config} on a heap of {@code maxHeap} bytes with {@code
   * eventLoops} event loops.
   */
  public static Plan plan(RelayConfig config, long maxHeap, int eventLoops) {
    long routers = (long) ROUTERS_PER_LOOP * eventLoops;
    InsightConfig insight = config.metrics().insight();
    var rules = config.tenant().rules();
    List<Part> parts = new ArrayList<>();
    Part insightPart =
        new Part(
            "insight",
            InsightConfig.MAX_TENANTS,
            config.isExplicit(InsightConfig.MAX_TENANTS),
            insight.enabled() ? insight.maxTenants() : 0,
            INSIGHT_TENANT_BYTES,
            MIN_INSIGHT_TENANTS,
            insight.enabled() ? INSIGHT_NAMES_BYTES + routers * DIGEST_NAMES_BYTES : 0);
    // A router's cache holds at most its byte bound, or max-cached values, whichever is less; a
    // request's new values come on top before the cache starts over at the next request.
    long cacheBytes =
        Math.min(
            rules.maxCachedTenantBytes(),
            Math.multiplyExact((long) rules.maxCachedTenants(), TENANT_VALUE_BYTES));
    Part cachePart =
        new Part(
            "tenant_cache",
            TenantConfig.MAX_CACHED,
            config.isExplicit(TenantConfig.MAX_CACHED),
            cacheBytes,
            routers,
            MIN_CACHED_TENANT_BYTES,
            routers * rules.maxTenantsPerRequest() * TENANT_VALUE_BYTES);
    boolean families = rules.maxFamilyTenants() > 0 && rules.maxFamilyBytes() > 0;
    Part familyPart =
        new Part(
            "metric_families",
            TenantConfig.METADATA_MAX_FAMILY_BYTES,
            config.isExplicit(TenantConfig.METADATA_MAX_FAMILY_BYTES),
            families ? rules.maxFamilyBytes() : 0,
            1,
            MIN_FAMILY_BYTES,
            families ? eventLoops * FAMILY_FILTER_BYTES : 0);
    Part ledgerPart =
        new Part(
            "delivery_ledger",
            DeliveryConfig.LEDGER_MAX_ENTRIES,
            config.isExplicit(DeliveryConfig.LEDGER_MAX_ENTRIES),
            config.delivery().ledgerMaxEntries(),
            LEDGER_NAME_BYTES,
            MIN_LEDGER_ENTRIES,
            THROTTLED_COUNTS_BYTES);
    boolean limits = config.limits().enabled();
    Part limitsPart =
        new Part(
            "limits",
            LimitsConfig.MAX_MEMORY_BYTES,
            config.isExplicit(LimitsConfig.MAX_MEMORY_BYTES),
            limits ? config.limits().maxMemoryBytes() : 0,
            1,
            MIN_LIMITS_BYTES,
            0);
    Part scratchPart =
        new Part("scratch", null, false, 0, 0, 0, eventLoops * ScratchMemory.RETAINED_BYTES);
    parts.add(insightPart);
    parts.add(cachePart);
    parts.add(familyPart);
    parts.add(ledgerPart);
    parts.add(limitsPart);
    parts.add(scratchPart);

    long share = maxHeap / HEAP_SHARE_DIVISOR;
    fit(parts, share);

    RelayConfig effective =
        config.withRetainedBounds(
            insight.enabled() ? (int) insightPart.planned : insight.maxTenants(),
            cachePart.planned == cacheBytes ? rules.maxCachedTenantBytes() : cachePart.planned,
            families ? familyPart.planned : rules.maxFamilyBytes(),
            (int) ledgerPart.planned,
            limits ? limitsPart.planned : config.limits().maxMemoryBytes());
    List<Bound> bounds = new ArrayList<>();
    List<String> explicit = new ArrayList<>();
    long total = 0;
    for (Part p : parts) {
      bounds.add(new Bound(p.structure, p.key, p.planned, p.bytes(), p.planned < p.value));
      total += p.bytes();
      if (p.explicit && p.value > 0) {
        explicit.add(p.key.name());
      }
    }
    return new Plan(effective, List.copyOf(bounds), total, share, maxHeap, List.copyOf(explicit));
  }

  /**
   * Lowers the scalable parts by one factor, each to no less than its floor, until the parts fit
   * {@code share}; a part that would go below its floor is held there and the factor found again.
   */
  private static void fit(List<Part> parts, long share) {
    long total = 0;
    for (Part p : parts) {
      total += p.bytes();
    }
    if (total <= share) {
      return;
    }
    List<Part> scaled = new ArrayList<>();
    long held = 0;
    for (Part p : parts) {
      if (p.scalable()) {
        scaled.add(p);
        held += p.fixedBytes;
      } else {
        held += p.bytes();
      }
    }
    while (!scaled.isEmpty()) {
      long room = share - held;
      long wanted = 0;
      for (Part p : scaled) {
        wanted += p.value * p.unitBytes;
      }
      double factor = room <= 0 ? 0 : (double) room / wanted;
      Part floored = null;
      for (Part p : scaled) {
        if (p.value * factor < p.floor) {
          floored = p;
          break;
        }
      }
      if (floored == null) {
        for (Part p : scaled) {
          p.planned = Math.min(p.value, (long) (p.value * factor));
        }
        return;
      }
      floored.planned = floored.floor;
      held += floored.floor * floored.unitBytes;
      scaled.remove(floored);
    }
  }

  private static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1 << 20));
  }
}
