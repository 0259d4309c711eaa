package io.prwrelay.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The tenant values one router remembers across requests: at most {@code relay.tenant.max-cached}
 * of them and at most {@link TenantSlots#MAX_BYTES} of heap, whichever comes first; past either,
 * the next request starts the table over and still resolves every tenant.
 */
class TenantSlotsTest {
  /** A valid tenant ID of {@code length} characters, distinct for each {@code i}. */
  private static byte[] tenant(int i, int length) {
    byte[] b = new byte[length];
    Arrays.fill(b, (byte) 'x');
    byte[] n = Integer.toString(i).getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(n, 0, b, 0, n.length);
    return b;
  }

  private static int resolveAll(TenantSlots slots, int from, int count, int length) {
    for (int i = from; i < from + count; i++) {
      byte[] t = tenant(i, length);
      assertTrue(TenantTable.isEntry(slots.resolve(t, 0, t.length)), "tenant " + i);
    }
    return slots.cached();
  }

  @Test
  void theLongestTenantIdsStartTheTableOverAtItsByteBound() {
    TenantSlots slots = new TenantSlots(TenantRules.builder().build());
    long perId = TenantTable.ENTRY_BYTES + 2L * TenantIds.MAX_LENGTH;
    int fit = (int) ((TenantSlots.MAX_BYTES + perId - 1) / perId);
    slots.startRequest();
    assertEquals(fit - 1, resolveAll(slots, 0, fit - 1, TenantIds.MAX_LENGTH));
    slots.startRequest();
    assertEquals(fit - 1, slots.cached(), "under the bound: kept");
    assertEquals(fit, resolveAll(slots, fit - 1, 1, TenantIds.MAX_LENGTH));
    slots.startRequest();
    assertEquals(0, slots.cached(), "at the bound: started over");
    assertEquals(1, resolveAll(slots, 0, 1, TenantIds.MAX_LENGTH));
  }

  @Test
  void shortTenantIdsStartTheTableOverAtTheCountBound() {
    TenantSlots slots = new TenantSlots(TenantRules.builder().maxCachedTenants(1000).build());
    slots.startRequest();
    assertEquals(1000, resolveAll(slots, 0, 1000, 20));
    slots.startRequest();
    assertEquals(0, slots.cached());
  }
}
