package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.prwrelay.server.isolation.BadTenants.Expectation;
import io.prwrelay.server.isolation.BadTenants.LeakDetection;
import io.prwrelay.server.isolation.BadTenants.Relays;
import io.prwrelay.server.isolation.IsolationRun.Exchange;
import io.prwrelay.server.isolation.IsolationRun.Kind;
import io.prwrelay.server.isolation.IsolationRun.Side;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Queue mode, end to end over real sockets: with one bad tenant among ten healthy ones, every
 * sender, including those that carry the bad tenant, is answered 204 as fast as without it, and
 * every healthy series reaches the downstream exactly once, while the bad tenant's data waits in
 * its own queue.
 *
 * <p>Tagged {@code isolation}: it keeps both cores busy, so it runs after the other test classes,
 * with nothing beside it (see relay-server's pom.xml).
 */
@Tag("isolation")
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class QueueModeIsolationTest {
  /** Healthy queues drain within this after the senders stop. */
  private static final Duration DRAIN = Duration.ofSeconds(10);

  @TempDir Path dir;

  private Relays relays() throws Exception {
    return Relays.start(
        "queue",
        () -> {
          try {
            return BadTenants.settings(
                Map.of(
                    "relay.delivery.mode",
                    "queue",
                    "relay.delivery.queue.dir",
                    Files.createTempDirectory(dir, "queue").toString()));
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
  }

  private void mixedRequestsAreAnsweredAtHealthySpeed(String label, Supplier<Reply> bad)
      throws Exception {
    try (Relays relays = relays()) {
      BadTenants.runAndCheck(
          label,
          relays,
          bad,
          new Expectation(
              true,
              r -> {
                for (Exchange e : r.every(Side.WITH_BAD, Kind.MIXING)) {
                  assertEquals(204, e.first().status(), () -> e.request().id() + ": " + e.first());
                }
                return null;
              }),
          DRAIN);
    }
  }

  @Test
  void aThrottledTenantWaitsInItsQueueAndHoldsBackNoOne() throws Exception {
    mixedRequestsAreAnsweredAtHealthySpeed("queue 429", BadTenants.throttled());
  }

  @Test
  void aSlowTenantWaitsInItsQueueAndHoldsBackNoOne() throws Exception {
    mixedRequestsAreAnsweredAtHealthySpeed("queue slow", BadTenants.slow());
  }

  @Test
  void aTenantFailingInBurstsWaitsInItsQueueAndHoldsBackNoOne() throws Exception {
    mixedRequestsAreAnsweredAtHealthySpeed("queue 503 bursts", BadTenants.burstsOf503());
  }
}
