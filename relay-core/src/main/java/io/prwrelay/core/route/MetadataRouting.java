package io.prwrelay.core.route;

import io.prwrelay.core.encode.BatchEncoder;
import io.prwrelay.core.wire.MetricMetadataFields;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code metadata} entries of one PRW 1.0 request, and where they go when the request has no
 * series left to carry them: each entry to the tenants its sender recently sent series of its
 * family to ({@link MetricFamilies}), else to the default tenant under {@code
 * relay.tenant.missing=default}, else nowhere (counted).
 *
 * <p>An entry goes to all its tenants or to none: it is dropped when copying it once per tenant
 * would take the request's copies past {@link TenantRules#maxBroadcastMetadataBytes()}, or when its
 * tenants would open more batches than {@link TenantRules#maxTenantsPerRequest()}. Each kept entry
 * is handed to the {@link BatchEncoder} as a segment of its tenants' slots, so the batches are
 * built like any other: one exact-size buffer each, the entries' bytes copied as received.
 *
 * <p>Allocates per request that has no series (a map of its tenants' slots); nothing per request
 * otherwise. Not thread-safe: one per router.
 */
final class MetadataRouting {
  private int count;
  private int[] starts = new int[16];
  private int[] ends = new int[16];
  private final List<String> tenants = new ArrayList<>();

  /** Forgets the previous request's entries. */
  void reset() {
    count = 0;
  }

  /** Records a {@code metadata} field {@code [start, end)} (tag included). */
  void add(int start, int end) {
    if (count == starts.length) {
      starts = Arrays.copyOf(starts, count * 2);
      ends = Arrays.copyOf(ends, count * 2);
    }
    starts[count] = start;
    ends[count] = end;
    count++;
  }

  /** Entries recorded for this request. */
  int count() {
    return count;
  }

  /**
   * Routes every recorded entry of a request that opened no batch slot: opens one slot per tenant
   * that receives an entry, adds the entries to the encoder, and counts into {@code result} how
   * each entry was routed or why it was dropped.
   *
   * @param array borrowed; the request bytes the entries lie in
   * @param sender who sent the request: only its own families are looked up
   */
  void route(
      byte[] array,
      long sender,
      MetricFamilies families,
      TenantRules rules,
      TenantSlots slots,
      BatchEncoder encoder,
      RouteResult result) {
    Map<String, Integer> slotOf = new HashMap<>();
    long copied = 0;
    long maxBytes = rules.maxBroadcastMetadataBytes();
    int maxTenants = rules.maxTenantsPerRequest();
    boolean toDefault = rules.missing() == TenantRules.MissingPolicy.DEFAULT;
    for (int i = 0; i < count; i++) {
      int start = starts[i];
      int end = ends[i];
      tenants.clear();
      long name = familyName(array, start, end);
      if (name >= 0 && families.enabled()) {
        families.tenantsOf(sender, array, (int) (name >>> 32), (int) name, tenants);
      }
      MetadataRoute how = MetadataRoute.FAMILY;
      if (tenants.isEmpty()) {
        if (!toDefault) {
          result.metadataDropped[MetadataDrop.UNKNOWN_FAMILY.ordinal()]++;
          continue;
        }
        tenants.add(rules.defaultTenantId());
        how = MetadataRoute.DEFAULT;
      }
      long bytes = (long) (end - start) * tenants.size();
      if (copied + bytes > maxBytes) {
        result.metadataDropped[MetadataDrop.MAX_BROADCAST_BYTES.ordinal()]++;
        continue;
      }
      int opening = 0;
      for (int t = 0; t < tenants.size(); t++) {
        if (!slotOf.containsKey(tenants.get(t))) {
          opening++;
        }
      }
      if (slotOf.size() + opening > maxTenants) {
        result.metadataDropped[MetadataDrop.TOO_MANY_TENANTS.ordinal()]++;
        continue;
      }
      copied += bytes;
      for (int t = 0; t < tenants.size(); t++) {
        String tenant = tenants.get(t);
        Integer slot = slotOf.get(tenant);
        if (slot == null) {
          slot = slots.openNamed(tenant, encoder.openSlot());
          slotOf.put(tenant, slot);
        }
        encoder.addMetadata(slot, start, end);
      }
      result.metadataRouted[how.ordinal()]++;
    }
    tenants.clear();
  }

  /**
   * Where the {@code metric_family_name} of the {@code metadata} field {@code [start, end)} lies:
   * the offset in the high and the length in the low 32 bits, or -1 when it has none (or an empty
   * one) or its fields cannot be read (such an entry is routed as one of an unknown family). The
   * last occurrence wins, as in protobuf.
   */
  static long familyName(byte[] a, int start, int end) {
    long tag = RawFields.varint(a, start, end);
    if (tag < 0) {
      return -1;
    }
    long content = RawFields.body(a, RawFields.next(tag), end);
    if (content < 0) {
      return -1;
    }
    int pos = RawFields.next(content);
    int limit = pos + RawFields.value(content);
    long found = -1;
    while (pos < limit) {
      long t = RawFields.varint(a, pos, limit);
      if (t < 0) {
        return -1;
      }
      pos = RawFields.next(t);
      if (RawFields.value(t) == MetricMetadataFields.METRIC_FAMILY_NAME_TAG) {
        long name = RawFields.body(a, pos, limit);
        if (name < 0) {
          return -1;
        }
        found = RawFields.value(name) > 0 ? name : -1;
        pos = RawFields.next(name) + RawFields.value(name);
      } else {
        pos = RawFields.skip(a, pos, limit, RawFields.value(t));
        if (pos < 0) {
          return -1;
        }
      }
    }
    return found;
  }
}
