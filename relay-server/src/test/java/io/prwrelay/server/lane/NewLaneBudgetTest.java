package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The per-sender buckets of new lanes: refill, and the bound on senders with a bucket. */
class NewLaneBudgetTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  @Test
  void aSenderGetsItsBurstThenTheRateAndWaitsTheTimeToTheNextToken() {
    NewLaneBudget b = new NewLaneBudget(2, 3);
    for (int i = 0; i < 3; i++) {
      assertEquals(0, b.take("s", 0));
    }
    assertEquals(SECOND / 2, b.take("s", 0), "a token every half second");
    assertEquals(SECOND / 4, b.take("s", SECOND / 4));
    assertEquals(0, b.take("s", SECOND / 2));
    assertEquals(2, b.refused());
    assertEquals(0, b.take("other", 0), "another sender has its own bucket");
  }

  @Test
  void sendersBeyondTheBoundShareOneBucketUntilABucketHasRefilled() {
    NewLaneBudget b = new NewLaneBudget(1, 1);
    for (int i = 0; i < NewLaneBudget.MAX_SENDERS; i++) {
      assertEquals(0, b.take(i, 0));
    }
    assertEquals(NewLaneBudget.MAX_SENDERS, b.senders());
    assertEquals(0, b.take("late-1", 0), "the shared bucket's one token");
    assertEquals(SECOND, b.take("late-2", 0), "shared with late-1");
    assertEquals(NewLaneBudget.MAX_SENDERS, b.senders(), "never more buckets than the bound");
    // A second later every bucket is full again: they are dropped, and a new sender gets its own.
    assertEquals(0, b.take("late-3", SECOND));
    assertEquals(1, b.senders());
  }

  @Test
  void noRateMeansNoBound() {
    NewLaneBudget b = new NewLaneBudget(0, 1);
    for (int i = 0; i < 100; i++) {
      assertEquals(0, b.take("s", 0));
    }
    assertEquals(0, b.senders());
  }
}
