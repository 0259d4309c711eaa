package io.prwrelay.bench.load;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

class RelayAllocationTest {
  @Test
  void theSumOverThreadsGrowsByWhatAThreadAllocates() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long before = RelayAllocation.sum(threads);
    byte[][] kept = new byte[64][];
    for (int i = 0; i < kept.length; i++) {
      kept[i] = new byte[64 * 1024];
    }
    long after = RelayAllocation.sum(threads);
    assertTrue(after - before >= 64L * 64 * 1024, (after - before) + " bytes, kept " + kept.length);
  }
}
