package io.prwrelay.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.core.route.TenantRules;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The long-lived structures' bounds fitted to the heap: defaults lowered together on a small heap,
 * explicit bounds kept and warned about, a large heap left alone.
 */
class RetainedMemoryTest {
  private static final long MIB = 1L << 20;

  private static RelayConfig config(Map<String, String> set) throws ConfigException {
    return RelayConfig.load(null, set, Map.of());
  }

  private static RetainedMemory.Bound bound(RetainedMemory.Plan plan, String structure) {
    return plan.bounds().stream()
        .filter(b -> b.structure().equals(structure))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void a256MiBHeapWithDefaultsFitsOnceTheDefaultsAreLowered() throws Exception {
    RetainedMemory.Plan plan = RetainedMemory.plan(RelayConfig.defaults(), 256 * MIB, 2);
    assertTrue(plan.fits(), plan.summary());
    assertTrue(plan.lowered());
    assertNull(plan.warning());
    assertTrue(plan.totalBytes() <= 256 * MIB / 3, plan.summary());
    RelayConfig c = plan.config();
    int tenants = c.metrics().insight().maxTenants();
    assertTrue(tenants >= 50 && tenants < 1000, "insight tenants " + tenants);
    long cache = c.tenant().rules().maxCachedTenantBytes();
    assertTrue(cache >= MIB / 2 && cache < 16 * MIB, "cache " + cache);
    long families = c.tenant().rules().maxFamilyBytes();
    assertTrue(families >= 2 * MIB && families < 40 * MIB, "families " + families);
    int ledger = c.delivery().ledgerMaxEntries();
    assertTrue(ledger >= 5_000 && ledger < 100_000, "ledger " + ledger);
    // Lowered by one factor: each keeps about the same fraction of its default.
    double f = tenants / 1000.0;
    assertEquals(f, families / (40.0 * MIB), 0.01);
    assertEquals(f, ledger / 100_000.0, 0.01);
    assertTrue(plan.summary().contains("relay.insight.max-tenants=" + tenants), plan.summary());
    assertEquals(6, plan.bounds().size());
    long sum = plan.bounds().stream().mapToLong(RetainedMemory.Bound::bytes).sum();
    assertEquals(plan.totalBytes(), sum);
  }

  @Test
  void explicitBoundsAreKeptAndATooLargeTotalIsWarnedAbout() throws Exception {
    RelayConfig set =
        config(
            Map.of(
                "relay.insight.max-tenants", "1000",
                "relay.metadata.max-family-bytes", "64MiB"));
    RetainedMemory.Plan plan = RetainedMemory.plan(set, 256 * MIB, 2);
    assertEquals(1000, plan.config().metrics().insight().maxTenants());
    assertEquals(64 * MIB, plan.config().tenant().rules().maxFamilyBytes());
    assertFalse(plan.fits());
    String w = plan.warning();
    assertTrue(
        w.contains("relay.insight.max-tenants")
            && w.contains("relay.metadata.max-family-bytes")
            && w.contains("256.0 MiB heap"),
        w);
    assertTrue(
        w.contains(
            String.format(java.util.Locale.ROOT, "%.1f MiB", plan.totalBytes() / (double) MIB)),
        w);
    // What was left at its default went to its floor to make what room it could.
    assertEquals(5_000, plan.config().delivery().ledgerMaxEntries());
    assertEquals(MIB / 2, plan.config().tenant().rules().maxCachedTenantBytes());
  }

  @Test
  void explicitBoundsThatFitAreKeptAndTheOthersMakeRoom() throws Exception {
    RelayConfig set = config(Map.of("relay.insight.max-tenants", "200"));
    RetainedMemory.Plan plan = RetainedMemory.plan(set, 256 * MIB, 2);
    assertTrue(plan.fits(), plan.summary());
    assertEquals(200, plan.config().metrics().insight().maxTenants());
    assertFalse(bound(plan, "insight").lowered());
    assertTrue(bound(plan, "metric_families").lowered());
  }

  @Test
  void theHeapOfA512MiBContainerFitsTheDefaults() throws Exception {
    RetainedMemory.Plan plan = RetainedMemory.plan(RelayConfig.defaults(), 205 * MIB, 2);
    assertTrue(plan.fits(), plan.summary());
  }

  @Test
  void a4GiBHeapKeepsEveryDefault() throws Exception {
    RelayConfig defaults = RelayConfig.defaults();
    RetainedMemory.Plan plan = RetainedMemory.plan(defaults, 4096 * MIB, 2);
    assertTrue(plan.fits());
    assertFalse(plan.lowered());
    assertNull(plan.warning());
    RelayConfig c = plan.config();
    assertEquals(1000, c.metrics().insight().maxTenants());
    assertEquals(
        TenantRules.DEFAULT_MAX_CACHED_TENANT_BYTES, c.tenant().rules().maxCachedTenantBytes());
    assertEquals(40 * MIB, c.tenant().rules().maxFamilyBytes());
    assertEquals(100_000, c.delivery().ledgerMaxEntries());
    assertEquals(64 * MIB, c.limits().maxMemoryBytes());
    // 1,000 tenants of 105 KiB and their names, 6 caches of 16 MiB, ...
    assertEquals(
        1000 * RetainedMemory.INSIGHT_TENANT_BYTES,
        bound(plan, "insight").bytes()
            - RetainedMemory.INSIGHT_NAMES_BYTES
            - 6 * RetainedMemory.DIGEST_NAMES_BYTES);
    assertEquals(8 * MIB, bound(plan, "scratch").bytes());
    assertEquals(0, bound(plan, "limits").bytes(), "limits are off");
  }

  @Test
  void limitsCountOnlyWhenOnAndAreLoweredLikeTheOthers() throws Exception {
    RelayConfig on = config(Map.of("relay.limits.max-series-per-tenant", "1000"));
    assertEquals(64 * MIB, bound(RetainedMemory.plan(on, 4096 * MIB, 2), "limits").bytes());
    RetainedMemory.Plan small = RetainedMemory.plan(on, 256 * MIB, 2);
    assertTrue(small.fits(), small.summary());
    long limits = small.config().limits().maxMemoryBytes();
    assertTrue(limits >= 8 * MIB && limits < 64 * MIB, "limits " + limits);
  }

  @Test
  void switchedOffStructuresTakeNothing() throws Exception {
    RelayConfig off =
        config(
            Map.of(
                "relay.insight.enabled", "false",
                "relay.metadata.max-family-tenants", "0",
                "relay.delivery.ledger.max-entries", "0"));
    RetainedMemory.Plan plan = RetainedMemory.plan(off, 256 * MIB, 2);
    assertEquals(0, bound(plan, "insight").bytes());
    assertEquals(0, bound(plan, "metric_families").bytes());
    assertEquals(0, plan.config().delivery().ledgerMaxEntries());
  }
}
