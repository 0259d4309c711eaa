package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.isolation.IdRequests.Part;
import io.prwrelay.server.isolation.IdRequests.Request;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A relay stopped while a tenant's downstream request is still waiting for its answer: the stop
 * completes that request as failed, so that everything it held is released (the class fails on a
 * leaked buffer) and, in queue mode, its records stay queued and are delivered after the restart.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShutdownWithSendsInFlightTest {
  private static final Reply NEVER_IN_TIME = Reply.slow(Duration.ofSeconds(30));

  /** Long enough that the slow tenant's request is still in flight when the relay stops. */
  private static final Map<String, String> PATIENT =
      Map.of("relay.downstream.timeout", "20s", "relay.downstream.attempt-timeout", "20s");

  @TempDir Path dir;

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    Await.until(what, Duration.ofSeconds(10), condition);
  }

  @Test
  void syncModeStopEndsTheSendInFlightAndItsSenderRequest() throws Exception {
    Request request =
        new IdRequests(1).build("r", List.of(new Part("slow", 3), new Part("quick", 3)));
    CompletableFuture<SenderConnection.Answer> answer;
    try (RelayFixture relay = new RelayFixture(PATIENT)) {
      relay.downstream.rule("slow", () -> NEVER_IN_TIME);
      SenderConnection sender =
          new SenderConnection(relay.relay.address(), "/api/v1/write", 30_000);
      answer =
          CompletableFuture.supplyAsync(
              () -> {
                try (sender) {
                  return sender.post(request.snappy());
                } catch (IOException e) {
                  throw new IllegalStateException(e);
                }
              });
      await(
          "the slow tenant's request at the downstream",
          () -> relay.downstream.received().size() == 2);
    }
    // The relay waits for the request up to its grace period, then closes the connection.
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> answer.get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause().getCause() instanceof IOException, e.toString());
  }

  @Test
  void queueModeStopEndsTheSendInFlightAndItsRecordsAreDeliveredAfterTheRestart() throws Exception {
    Map<String, String> config =
        Map.of(
            "relay.delivery.mode",
            "queue",
            "relay.delivery.queue.dir",
            dir.toString(),
            "relay.downstream.attempt-timeout",
            "20s");
    Request request = new IdRequests(2).build("r", List.of(new Part("slow", 3)));
    try (RelayFixture relay = new RelayFixture(config)) {
      relay.downstream.rule("slow", () -> NEVER_IN_TIME);
      try (SenderConnection sender =
          new SenderConnection(relay.relay.address(), "/api/v1/write", 30_000)) {
        assertEquals(204, sender.post(request.snappy()).status());
      }
      await("the queued batch at the downstream", () -> relay.downstream.received().size() == 1);
    }
    try (RelayFixture restarted = new RelayFixture(config)) {
      DeliveredSeries delivered = new DeliveredSeries(restarted.downstream);
      await(
          "the batch delivered after the restart", () -> delivered.update().distinct("slow") == 3);
      assertEquals(
          List.of(), delivered.exactlyOnce("slow", java.util.Set.copyOf(request.ids("slow"))));
    }
  }
}
