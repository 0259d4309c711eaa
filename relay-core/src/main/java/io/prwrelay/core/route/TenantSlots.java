package io.prwrelay.core.route;

import java.util.Arrays;

/**
 * The slot table of one request, shared by the PRW 1.0 and PRW 2.0 routers: resolves tenant values
 * through the byte-keyed {@link TenantTable} (kept across requests) and remembers, for the current
 * request only, which batch slot each table entry writes to and the tenant ID of each slot.
 *
 * <p>Slots are numbered by the encoder in the order tenants first appear; {@link #tenants()} is the
 * array the encoder names its batches from. Not thread-safe: owned by one router.
 */
final class TenantSlots {
  /**
   * Most heap the tenant table of one router may take before it starts over by default, whatever
   * {@link TenantRules#maxCachedTenants()} allows ({@link TenantTable#bytes()}; {@link
   * TenantRules#maxCachedTenantBytes()}): 16 MiB, about 120,000 IDs of 20 characters or 42,000 of
   * the longest valid ones (150).
   */
  static final long MAX_BYTES = TenantRules.DEFAULT_MAX_CACHED_TENANT_BYTES;

  private final TenantTable table;
  private final int maxCachedTenants;
  private final long maxBytes;
  private final RequestIntMap entrySlots = new RequestIntMap(64);
  private String[] tenants = new String[16];
  private int opened;

  TenantSlots(TenantRules rules) {
    this.table = new TenantTable(rules.prefix(), rules.defaultTenantId(), 64, rules.allowed());
    this.maxCachedTenants = rules.maxCachedTenants();
    this.maxBytes = rules.maxCachedTenantBytes();
  }

  /**
   * Forgets the previous request's slots; starts the tenant table over once it holds {@link
   * TenantRules#maxCachedTenants()} values or {@link TenantRules#maxCachedTenantBytes()}.
   */
  void startRequest() {
    if (table.size() >= maxCachedTenants || table.bytes() >= maxBytes) {
      table.clear();
    }
    entrySlots.clear();
    opened = 0;
  }

  /**
   * The table's answer for a tenant value: an entry when {@link TenantTable#isEntry}, otherwise a
   * {@link TenantTable#problemOf problem}.
   *
   * @param array borrowed; read in place
   */
  int resolve(byte[] array, int offset, int length) {
    return table.resolve(array, offset, length);
  }

  /** The slot opened for {@code entry} in this request, or {@link RequestIntMap#ABSENT}. */
  int slotOf(int entry) {
    return entrySlots.get(entry);
  }

  /** Records that {@code entry} writes to the newly opened {@code slot}; returns {@code slot}. */
  int open(int entry, int slot) {
    if (slot >= tenants.length) {
      tenants = Arrays.copyOf(tenants, Math.max(slot + 1, tenants.length * 2));
    }
    tenants[slot] = table.id(entry);
    opened++;
    return entrySlots.put(entry, slot);
  }

  /**
   * Records that tenant ID {@code tenant}, which no tenant label value of this request resolved to
   * (a tenant of a metadata entry's family), writes to the newly opened {@code slot}; returns
   * {@code slot}.
   */
  int openNamed(String tenant, int slot) {
    if (slot >= tenants.length) {
      tenants = Arrays.copyOf(tenants, Math.max(slot + 1, tenants.length * 2));
    }
    tenants[slot] = tenant;
    opened++;
    return slot;
  }

  /** Tenant values the table remembers now. */
  int cached() {
    return table.size();
  }

  /** Slots opened in this request. */
  int opened() {
    return opened;
  }

  /** Tenant ID of each slot opened in this request, by slot; borrowed by the encoder. */
  String[] tenants() {
    return tenants;
  }
}
