package io.prwrelay.bench;

import io.prwrelay.core.route.MetricFamilies;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Random;

/**
 * The heap {@link MetricFamilies} takes when full (500,000 associations, the default {@code
 * relay.metadata.max-family-tenants}), beside the smallest version of it built on the JDK's maps:
 * the associations themselves as the keys of one access-ordered {@link LinkedHashMap} (the age
 * order that expiry walks), one access-ordered map per sender (the order its fair eviction takes
 * from) and one map of tenants per family (what a metadata entry looks up). Heap after full GCs,
 * filled with eight senders, in the three shapes docs/configuration.md names (Metadata), and in the
 * shape of a hostile sender: every association names a tenant ID of 150 bytes of its own. Beside
 * each, what {@link MetricFamilies#bytes()} charges for it against {@code
 * relay.metadata.max-family-bytes}.
 *
 * <pre>
 * java -Xmx2g -XX:+UseSerialGC -cp relay-bench/target/benchmarks.jar io.prwrelay.bench.FamilyMemory
 * </pre>
 */
public final class FamilyMemory {
  private static final int ASSOCIATIONS = 500_000;
  private static final int LONGEST_TENANT_ID = 150;

  private FamilyMemory() {}

  /** One sender–family–tenant association of the map-based version; its own key. */
  private static final class Association {
    final long sender;
    final long family;
    final String tenant;
    long seen;

    Association(long sender, long family, String tenant, long seen) {
      this.sender = sender;
      this.family = family;
      this.tenant = tenant;
      this.seen = seen;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Association a && a.family == family && a.tenant.equals(tenant);
    }

    @Override
    public int hashCode() {
      return Long.hashCode(family) * 31 + tenant.hashCode();
    }
  }

  /** The map-based version's storage, filled as its {@code learn} would fill it. */
  private static final class Maps {
    final LinkedHashMap<Association, Association> byAge = new LinkedHashMap<>(16, 0.75f, true);
    final HashMap<Long, LinkedHashMap<Association, Association>> bySender = new HashMap<>();
    final HashMap<Long, HashMap<String, Association>> byFamily = new HashMap<>();

    void learn(long sender, long family, String tenant, long now) {
      Association a = new Association(sender, family, tenant, now);
      byAge.put(a, a);
      bySender.computeIfAbsent(sender, s -> new LinkedHashMap<>(16, 0.75f, true)).put(a, a);
      byFamily.computeIfAbsent(family, f -> new HashMap<>(4)).put(tenant, a);
    }
  }

  public static void main(String[] args) throws Exception {
    for (int families : new int[] {100_000, 500, 500_000}) {
      for (boolean maps : new boolean[] {false, true}) {
        System.out.printf(
            Locale.ROOT,
            "%-16s %s%n",
            maps ? "LinkedHashMaps" : "MetricFamilies",
            fill(families, maps, false));
      }
    }
    System.out.printf(Locale.ROOT, "%-16s %s%n", "MetricFamilies", fill(ASSOCIATIONS, false, true));
  }

  /**
   * @param ownIds every association names a tenant ID of {@value #LONGEST_TENANT_ID} bytes of its
   *     own, made as it is learned (so that only the families keep it)
   */
  private static String fill(int families, boolean maps, boolean ownIds) throws Exception {
    int tenantsPer = ASSOCIATIONS / families;
    String[] tenants = new String[tenantsPer];
    for (int t = 0; t < tenantsPer; t++) {
      tenants[t] = "tenant-" + t;
    }
    long charged = 0;
    Random random = new Random(1);
    long[] keys = new long[families];
    for (int f = 0; f < families; f++) {
      keys[f] = random.nextLong();
    }
    long before = heapAfterGc();
    Object kept;
    if (maps) {
      Maps m = new Maps();
      for (int f = 0; f < families; f++) {
        for (String t : tenants) {
          m.learn(1 + (f % 8), keys[f], t, 1);
        }
      }
      kept = m;
    } else {
      MetricFamilies m = new MetricFamilies(ASSOCIATIONS, Long.MAX_VALUE / 4, () -> 1L);
      long[] key = new long[1];
      String[] tenant = new String[1];
      for (int f = 0; f < families; f++) {
        for (String t : tenants) {
          key[0] = keys[f];
          tenant[0] = ownIds ? ownId(f) : t;
          m.learn(1 + (f % 8), key, tenant, 1);
        }
      }
      charged = m.bytes();
      kept = m;
    }
    long bytes = heapAfterGc() - before;
    String line =
        String.format(
            Locale.ROOT,
            "%,7d families x %,5d tenants%s: %6.1f MB, %5.1f B per association%s",
            families,
            tenantsPer,
            ownIds ? " of their own 150-byte IDs" : "",
            bytes / 1e6,
            bytes / (double) ASSOCIATIONS,
            maps ? "" : String.format(Locale.ROOT, " (charged %.1f MB)", charged / 1e6));
    return kept.hashCode() == 0 ? line + " " : line;
  }

  /** A tenant ID of {@value #LONGEST_TENANT_ID} bytes, distinct for each {@code i}. */
  private static String ownId(int i) {
    StringBuilder b = new StringBuilder(LONGEST_TENANT_ID).append("t-").append(i);
    while (b.length() < LONGEST_TENANT_ID) {
      b.append('x');
    }
    return b.toString();
  }

  private static long heapAfterGc() throws InterruptedException {
    Runtime r = Runtime.getRuntime();
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
    }
    return r.totalMemory() - r.freeMemory();
  }
}
