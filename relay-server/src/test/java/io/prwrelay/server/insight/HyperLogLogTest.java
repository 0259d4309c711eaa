package io.prwrelay.server.insight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class HyperLogLogTest {
  private static HyperLogLog counting(int n, SplittableRandom random) {
    HyperLogLog h = new HyperLogLog();
    for (int i = 0; i < n; i++) {
      h.add(random.nextLong());
    }
    return h;
  }

  @Test
  void nothingCountedIsZeroAndResetForgets() {
    HyperLogLog h = new HyperLogLog();
    assertTrue(h.isEmpty());
    assertEquals(0, h.estimate());
    h.add(42);
    h.add(42);
    assertEquals(1, Math.round(h.estimate()));
    h.reset();
    assertTrue(h.isEmpty());
    assertEquals(0, h.estimate());
  }

  @Test
  void theUnionCountsWhatEitherSideCountedOnce() {
    SplittableRandom random = new SplittableRandom(3);
    HyperLogLog a = counting(60_000, random);
    HyperLogLog b = counting(40_000, random);
    // The estimate of the union without building it is the built union's, exactly.
    double unbuilt = HyperLogLog.estimateUnion(new HyperLogLog[] {a, b}, 2);
    a.union(b);
    assertEquals(a.estimate(), unbuilt);
    assertEquals(100_000, unbuilt, 100_000 * 0.03);
    // Counting b's values again changes nothing.
    a.union(b);
    assertEquals(unbuilt, a.estimate());
  }

  @Test
  void registersCappedAtFifteenStillEstimateTenMillion() {
    HyperLogLog h = counting(10_000_000, new SplittableRandom(5));
    assertEquals(10_000_000, h.estimate(), 10_000_000 * 0.03);
  }
}
