package io.prwrelay.server.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.lane.BatchResult;
import io.prwrelay.server.lane.FragmentOutcome;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import io.prwrelay.server.protocol.WrittenCounts;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The sender's answer (docs/ARCHITECTURE.md#delivery-semantics), for every mix of tenant outcomes.
 */
class AnswerPolicyTest {
  /** A tenant batch's result as a finished fragment reports it. */
  private record Result(String tenant, SeriesCounts counts, FragmentOutcome outcome)
      implements BatchResult {
    @Override
    public int series() {
      return counts.series();
    }

    @Override
    public long samples() {
      return counts.samples();
    }

    @Override
    public long exemplars() {
      return counts.exemplars();
    }

    @Override
    public long histograms() {
      return counts.histograms();
    }
  }

  /** Each outcome as a lane reports the fragment a downstream answered this way. */
  private static Answer answer(AttemptOutcome... outcomes) {
    List<BatchResult> list = new ArrayList<>();
    for (int i = 0; i < outcomes.length; i++) {
      AttemptOutcome o = outcomes[i];
      Kind kind =
          o.success()
              ? Kind.DELIVERED
              : !o.retriable()
                  ? Kind.REJECTED
                  : o.status() == 429 ? Kind.THROTTLED : Kind.UNAVAILABLE;
      list.add(
          new Result(
              "t" + i,
              new SeriesCounts(3, 3, 0, 0),
              new FragmentOutcome(
                  kind, o.status(), o.success() ? "" : o.describe(), o.retryAfterMillis(), 1)));
    }
    return AnswerPolicy.fromResults(list);
  }

  /** The answer to a request of one batch, of tenant x, that ended with {@code outcome}. */
  private static Answer answerForX(SeriesCounts counts, FragmentOutcome outcome) {
    return AnswerPolicy.fromResults(List.of(new Result("x", counts, outcome)));
  }

  private static AttemptOutcome status(int s) {
    return new AttemptOutcome(s, "msg" + s, -1);
  }

  private static AttemptOutcome limited(long retryAfterMillis) {
    return new AttemptOutcome(429, "", retryAfterMillis);
  }

  @Test
  void allAcceptedIs204WithoutBody() {
    Answer a = answer(status(200), status(204), status(202));
    assertEquals(204, a.status());
    assertEquals("", a.message());
    assertEquals(-1, a.retryAfterSeconds());
    assertFalse(a.close());
  }

  @Test
  void writtenCountsSumDownstreamHeadersAndDeliveredOrQueuedBatchesOnly() {
    SeriesCounts counts = new SeriesCounts(2, 10, 3, 1);
    List<BatchResult> results =
        List.of(
            new Result("delivered", counts, new FragmentOutcome(Kind.DELIVERED, 200, "", -1, 1)),
            new Result("queued", counts, new FragmentOutcome(Kind.QUEUED, 204, "", -1, 0)),
            new Result(
                "own headers",
                counts,
                new FragmentOutcome(Kind.DELIVERED, 204, "", -1, 1, new WrittenCounts(7, -1, 0))),
            new Result("failed", counts, new FragmentOutcome(Kind.UNAVAILABLE, 500, "down", -1, 3)),
            new Result(
                "partly written",
                counts,
                new FragmentOutcome(Kind.REJECTED, 400, "bad", -1, 1, new WrittenCounts(4, 0, 0))));
    // samples 10 + 10 + 7 + 0 + 4; histograms 1 + 1 + 1 (relay's, header absent) + 0 + 0.
    assertEquals(new WrittenCounts(31, 3, 6), AnswerPolicy.written(results));
    Answer a = AnswerPolicy.fromResults(results).withWritten(AnswerPolicy.written(results));
    assertEquals(503, a.status());
    // The headers the ingress sets on the response from the answer's counts.
    io.netty.handler.codec.http.HttpHeaders h =
        new io.netty.handler.codec.http.DefaultHttpHeaders();
    a.written().setOn(h);
    assertEquals("31", h.get("X-Prometheus-Remote-Write-Samples-Written"));
    assertEquals("3", h.get("X-Prometheus-Remote-Write-Histograms-Written"));
  }

  @Test
  void noBatchesIs204() {
    assertEquals(204, AnswerPolicy.fromResults(List.of()).status());
  }

  @Test
  void onlyRejectionsAre400NamingEachTenant() {
    Answer a = answer(status(200), status(400), status(401));
    assertEquals(400, a.status());
    assertEquals(-1, a.retryAfterSeconds());
    assertTrue(a.message().startsWith("1 of 3 tenant batches accepted downstream; rejected:"));
    assertTrue(
        a.message().contains("tenant t1 (3 series, 1 attempt): downstream answered 400: msg400"));
    assertTrue(a.message().contains("tenant t2"));
    assertFalse(a.message().contains("tenant t0"));
  }

  @Test
  void anyRetriableWinsOverRejections() {
    Answer a = answer(status(400), status(500));
    assertEquals(503, a.status());
    assertTrue(a.message().contains("retriable failures, retry the whole request:\n  tenant t1"));
    assertTrue(a.message().contains("\nrejected (will be re-sent with the retry):\n  tenant t0"));
    assertEquals(503, answer(status(400), AttemptOutcome.transport("reset")).status());
  }

  @Test
  void only429sAre429WithTheLargestRetryAfterInWholeSeconds() {
    Answer a = answer(limited(1500), limited(7000));
    assertEquals(429, a.status());
    assertEquals(7, a.retryAfterSeconds());
    assertEquals(2, answer(limited(1500)).retryAfterSeconds(), "rounded up");
    assertEquals(-1, answer(status(429)).retryAfterSeconds());
  }

  @Test
  void mixed429AndServerErrorIs503KeepingTheRetryAfter() {
    assertEquals(503, answer(status(429), status(502)).status());
    Answer a = answer(limited(3000), AttemptOutcome.transport("cannot connect"), status(413));
    assertEquals(503, a.status());
    assertEquals(3, a.retryAfterSeconds());
  }

  @Test
  void aRequestWithAnAcceptedTenantGetsNoRetryAfterSoItsSenderDoesNotStall() {
    Answer throttled = answer(limited(6000), status(200));
    assertEquals(429, throttled.status());
    assertEquals(-1, throttled.retryAfterSeconds());
    Answer unavailable =
        answer(new AttemptOutcome(503, "circuit breaker open", 12_000), status(202));
    assertEquals(503, unavailable.status());
    assertEquals(-1, unavailable.retryAfterSeconds());
    Answer earlier =
        AnswerPolicy.fromResults(
            List.of(
                new Result(
                    "delivered before",
                    SeriesCounts.NONE,
                    new FragmentOutcome(Kind.DELIVERED, 200, "earlier attempt", -1, 0)),
                new Result(
                    "throttled",
                    SeriesCounts.NONE,
                    new FragmentOutcome(Kind.THROTTLED, 429, "over limit", 9000, 1))));
    assertEquals(429, earlier.status());
    assertEquals(-1, earlier.retryAfterSeconds(), "delivered by an earlier attempt counts too");
    Answer queued =
        AnswerPolicy.fromResults(
            List.of(
                new Result(
                    "queued", SeriesCounts.NONE, new FragmentOutcome(Kind.QUEUED, 204, "", -1, 0)),
                new Result(
                    "full",
                    SeriesCounts.NONE,
                    new FragmentOutcome(Kind.UNAVAILABLE, 503, "queue full", 5000, 0))));
    assertEquals(-1, queued.retryAfterSeconds(), "queued counts as accepted");
    assertEquals(
        7,
        answer(limited(7000), status(400)).retryAfterSeconds(),
        "a rejected tenant is not an accepted one");
  }

  @Test
  void attemptsAreCountedInTheMessage() {
    Answer a =
        answerForX(
            new SeriesCounts(5, 5, 0, 0),
            new FragmentOutcome(Kind.UNAVAILABLE, 503, "downstream answered 503: down", 1000, 4));
    assertTrue(a.message().contains("tenant x (5 series, 4 attempts): downstream answered 503"));
    assertEquals(1, a.retryAfterSeconds());
  }

  @Test
  void queuedBatchesCountAsAccepted() {
    Answer a = answerForX(SeriesCounts.NONE, new FragmentOutcome(Kind.QUEUED, 204, "", -1, 0));
    assertEquals(204, a.status());
  }
}
