package io.prwrelay.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LatencyHistogramTest {
  @Test
  void bucketsAreContiguousAndWithinOneSixtyFourth() {
    for (long v = 0; v < 5_000_000; v += 1 + v / 1000) {
      int i = LatencyHistogram.index(v);
      assertTrue(LatencyHistogram.upperBound(i) >= v, "value " + v);
      assertTrue(i == 0 || LatencyHistogram.upperBound(i - 1) < v, "value " + v);
      assertTrue(LatencyHistogram.upperBound(i) - v <= v / 64, "value " + v);
    }
  }

  @Test
  void percentiles() {
    LatencyHistogram h = new LatencyHistogram();
    assertEquals(0, h.percentileNanos(99));
    for (long ms = 1; ms <= 1000; ms++) {
      h.record(ms * 1_000_000);
    }
    assertEquals(1000, h.count());
    assertEquals(1_000_000_000L, h.maxNanos());
    assertEquals(500, h.percentileMillis(50), 500 / 64.0);
    assertEquals(990, h.percentileMillis(99), 990 / 64.0);
    assertEquals(1000, h.percentileMillis(100), 0.0);
  }
}
