package io.prwrelay.server.limits;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link SampleBucket} on a moved clock: the burst at once, then the rate; whole batches only. */
class SampleBucketTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void takesTheBurstAtOnceThenTheRate() {
    SampleBucket b = new SampleBucket(1_000, 5_000, 0);
    assertTrue(b.take(5_000, 0));
    assertFalse(b.take(1, 0), "empty");
    assertFalse(b.take(1_001, SECOND), "one second refills 1,000, not 1,001");
    assertTrue(b.take(1_000, SECOND));
    assertTrue(b.take(5_000, 100 * SECOND), "refilled to the burst, no more");
    assertFalse(b.take(1, 100 * SECOND));
  }

  @Test
  void aBatchLargerThanTheBurstIsRefusedEveryTime() {
    SampleBucket b = new SampleBucket(1_000, 5_000, 0);
    for (int i = 0; i < 10; i++) {
      assertFalse(b.take(5_001, i * 60 * SECOND));
    }
    assertTrue(b.take(5_000, 600 * SECOND), "a refused batch took nothing");
  }

  @Test
  void newLimitsKeepTheTokensUpToTheNewBurst() {
    SampleBucket b = new SampleBucket(1_000, 5_000, 0);
    b.limits(10, 100, 0);
    assertTrue(b.take(100, 0));
    assertFalse(b.take(1, 0));
    assertTrue(b.take(10, SECOND));
  }
}
