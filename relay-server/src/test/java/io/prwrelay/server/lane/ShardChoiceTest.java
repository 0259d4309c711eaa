package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Tenants whose IDs share one {@code String.hashCode} (strings of {@code Aa}/{@code BB} blocks)
 * still spread over the event loops, so one sender cannot pile its tenants onto the loop of a
 * victim.
 */
class ShardChoiceTest {
  @Test
  void tenantsSharingOneStringHashCodeSpreadOverTheLoops() {
    int loops = 4;
    int[] perLoop = new int[loops];
    int n = 1 << 12;
    Integer common = null;
    for (int v = 0; v < n; v++) {
      StringBuilder b = new StringBuilder();
      for (int k = 0; k < 12; k++) {
        b.append((v >>> k & 1) == 0 ? "Aa" : "BB");
      }
      String tenant = b.toString();
      if (common == null) {
        common = tenant.hashCode();
      }
      assertEquals(common, tenant.hashCode());
      int loop = Lanes.shardOf(tenant, loops);
      assertEquals(loop, Lanes.shardOf(tenant, loops), "one tenant, one loop");
      perLoop[loop]++;
    }
    for (int loop = 0; loop < loops; loop++) {
      // 1,024 expected; the binomial's standard deviation is 28.
      assertTrue(
          perLoop[loop] > 850 && perLoop[loop] < 1200, "loop " + loop + ": " + perLoop[loop]);
    }
  }
}
