package io.prwrelay.server.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The status mapping of DESIGN §5, outcome by outcome. */
class SenderAnswerTest {
  private static TenantSend send(String tenant, AttemptOutcome last) {
    TenantSend s = new TenantSend(tenant, null, 3, 3, 0, 0, 100);
    s.attempts = 1;
    s.last = last;
    return s;
  }

  private static SenderAnswer answer(AttemptOutcome... outcomes) {
    List<TenantSend> sends = new ArrayList<>();
    for (int i = 0; i < outcomes.length; i++) {
      sends.add(send("t" + i, outcomes[i]));
    }
    return SenderAnswer.of(sends);
  }

  private static AttemptOutcome status(int s) {
    return new AttemptOutcome(s, "msg" + s, -1);
  }

  @Test
  void allAcceptedIs204() {
    assertEquals(204, answer(status(200), status(204), status(202)).status());
  }

  @Test
  void onlyRejectionsAre400() {
    SenderAnswer a = answer(status(200), status(400), status(401));
    assertEquals(400, a.status());
    assertTrue(a.message().startsWith("1 of 3 tenant batches accepted downstream"), a.message());
    assertTrue(
        a.message().contains("tenant t1 (3 series, 1 attempt): downstream answered 400: msg400"));
    assertTrue(a.message().contains("tenant t2"));
  }

  @Test
  void anyRetriableWinsOverRejections() {
    assertEquals(503, answer(status(400), status(500)).status());
    assertEquals(503, answer(status(400), AttemptOutcome.transport("reset")).status());
  }

  @Test
  void only429sAre429WithTheLargestRetryAfter() {
    SenderAnswer a =
        answer(new AttemptOutcome(429, "", 1500), new AttemptOutcome(429, "", 7000), status(200));
    assertEquals(429, a.status());
    assertEquals(7, a.retryAfterSeconds());
    assertEquals(-1, answer(status(429)).retryAfterSeconds());
  }

  @Test
  void mixed429AndServerErrorIs503() {
    assertEquals(503, answer(status(429), status(502)).status());
  }
}
