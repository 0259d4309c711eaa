package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import java.util.List;
import org.junit.jupiter.api.Test;

class SyncAnswerTest {
  private static SenderRequest.Result result(String tenant, Kind kind, int status, long retryMs) {
    return new SenderRequest.Result(
        tenant,
        new SeriesCounts(3, 3, 0, 0),
        new FragmentOutcome(kind, status, "why " + tenant, retryMs, 1));
  }

  @Test
  void everyTenantDeliveredIs204() {
    SyncAnswer a =
        SyncAnswer.of(
            List.of(result("a", Kind.DELIVERED, 200, -1), result("b", Kind.DELIVERED, 204, -1)));
    assertEquals(204, a.status());
    assertEquals(-1, a.retryAfterSeconds());
    assertEquals(204, SyncAnswer.of(List.of()).status(), "nothing to deliver");
  }

  @Test
  void onlyThrottledFailuresAre429WithTheLargestRetryAfter() {
    SyncAnswer a =
        SyncAnswer.of(
            List.of(
                result("a", Kind.DELIVERED, 200, -1),
                result("b", Kind.THROTTLED, 429, 1500),
                result("c", Kind.THROTTLED, 429, 200)));
    assertEquals(429, a.status());
    assertEquals(2, a.retryAfterSeconds(), "1.5 s rounds up");
    assertTrue(a.message().startsWith("1 of 3 tenant batches accepted downstream"), a.message());
    assertTrue(a.message().contains("tenant b (3 series, 1 attempt): why b"), a.message());
  }

  @Test
  void anyUnavailableTenantMakesIt503AndRetriableWinsOverRejected() {
    SyncAnswer a =
        SyncAnswer.of(
            List.of(
                result("a", Kind.REJECTED, 400, -1),
                result("b", Kind.THROTTLED, 429, -1),
                result("c", Kind.UNAVAILABLE, 503, 800)));
    assertEquals(503, a.status());
    assertEquals(1, a.retryAfterSeconds());
    assertTrue(a.message().contains("rejected (will be re-sent with the retry):\n  tenant a"));
  }

  @Test
  void onlyRejectionsAre400WithoutRetryAfter() {
    SyncAnswer a = SyncAnswer.of(List.of(result("a", Kind.REJECTED, 400, -1)));
    assertEquals(400, a.status());
    assertEquals(-1, a.retryAfterSeconds());
    assertTrue(a.message().contains("; rejected:\n  tenant a (3 series, 1 attempt): why a"));
  }
}
