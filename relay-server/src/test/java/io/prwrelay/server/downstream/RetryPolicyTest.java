package io.prwrelay.server.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {
  @Test
  void backoffDoublesWithJitterUpToTheMaximum() {
    RetryPolicy p = new RetryPolicy(Duration.ofMillis(100), Duration.ofMillis(1000));
    for (int i = 0; i < 200; i++) {
      long first = p.delayNanos(1, -1);
      assertTrue(first >= 50_000_000 && first <= 100_000_000, "first " + first);
      long third = p.delayNanos(3, -1);
      assertTrue(third >= 200_000_000 && third <= 400_000_000, "third " + third);
      long late = p.delayNanos(30, -1);
      assertTrue(late >= 500_000_000 && late <= 1_000_000_000, "late " + late);
    }
  }

  @Test
  void retryAfterIsAFloor() {
    RetryPolicy p = new RetryPolicy(Duration.ofMillis(100), Duration.ofMillis(1000));
    assertEquals(5_000_000_000L, p.delayNanos(1, 5000));
  }

  @Test
  void parsesSecondsAndHttpDates() {
    long now = 1_700_000_000_000L;
    assertEquals(3000, RetryPolicy.parseRetryAfter("3", now));
    assertEquals(-1, RetryPolicy.parseRetryAfter("soon", now));
    assertEquals(-1, RetryPolicy.parseRetryAfter(null, now));
    assertEquals(-1, RetryPolicy.parseRetryAfter("-4", now));
    // 2023-11-14T22:13:20Z is `now`; ten seconds later:
    assertEquals(10_000, RetryPolicy.parseRetryAfter("Tue, 14 Nov 2023 22:13:30 GMT", now));
    assertEquals(0, RetryPolicy.parseRetryAfter("Tue, 14 Nov 2023 22:00:00 GMT", now));
  }
}
