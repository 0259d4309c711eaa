package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Queue mode: once a tenant's spilled batches are delivered, its queue directory disappears at the
 * next check (every 10 s), and {@code relay_queue_disk_bytes} and {@code
 * relay_tenant_queue_disk_bytes} say what the segment files took on disk until then.
 */
class QueueDiskCleanupTest {
  @TempDir Path dir;

  private static final Map<String, String> TENANT_A = Map.of("tenant", "a");

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aDrainedTenantsQueueDirectoryIsGoneWithinTheCheckInterval() throws Exception {
    AtomicBoolean down = new AtomicBoolean(true);
    try (RelayFixture f =
        new RelayFixture(
            Map.of("relay.delivery.mode", "queue", "relay.delivery.queue.dir", dir.toString()),
            d -> d.rule("a", () -> down.get() ? Reply.status(503, "down") : null))) {
      byte[] request = RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(1, 1));
      for (int i = 0; i < 5; i++) {
        assertEquals(204, f.write(request).statusCode(), "queued counts as written");
      }
      Path tenantDir = dir.resolve("a");
      assertTrue(Files.isDirectory(tenantDir));
      String metrics = f.get("/metrics").body();
      assertTrue(Scrape.sum(metrics, "relay_queue_disk_bytes", Map.of()) > 0, metrics);
      assertEquals(
          Scrape.sum(metrics, "relay_queue_disk_bytes", Map.of()),
          Scrape.sum(metrics, "relay_tenant_queue_disk_bytes", TENANT_A));

      down.set(false);
      await(
          () ->
              f.downstream.counts().containsKey("a")
                  && f.downstream.counts().get("a").series() == 5,
          20);
      // Delivered: the queue is empty, its last segment still on disk until the check.
      await(() -> !Files.exists(tenantDir), 25);
      String after = f.get("/metrics").body();
      assertEquals(0, Scrape.sum(after, "relay_queue_records", Map.of()), after);
      assertEquals(0, Scrape.sum(after, "relay_queue_disk_bytes", Map.of()), after);
      assertEquals(0, Scrape.sumOr(after, "relay_tenant_queue_disk_bytes", TENANT_A, 0), after);
      assertFalse(Files.exists(tenantDir));
    }
  }

  private static void await(BooleanSupplier condition, int seconds) throws InterruptedException {
    Await.until("the condition", Duration.ofSeconds(seconds), condition);
  }
}
