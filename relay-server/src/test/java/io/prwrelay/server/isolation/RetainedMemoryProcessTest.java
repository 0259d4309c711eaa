package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.ScriptedDownstream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * One sender without credentials cannot make a relay in a small container ({@link
 * RelayProcess#SMALL_CONTAINER}, two event loops, the default configuration) run out of heap: it
 * posts {@value #HOSTILE_REQUESTS} requests of 10,000 series, each of a tenant ID of 150 bytes of
 * its own and a metric name of its own, 800,000 tenant IDs in all. Before the long-lived structures
 * were bounded in bytes and fitted to the heap, the metric families alone kept every one of them
 * (about 310 bytes each) and the insight its 1,000 tenants' windows: the live heap after full
 * collections climbed 6, 118, 157, 200, 232, 248 MB and the relay exited on OutOfMemoryError after
 * 36 to 44 such requests. Meanwhile another sender, from another address, posts 10 small tenants
 * and must get 204 every time, with exactly its series delivered; at the end the relay is alive and
 * answers.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RetainedMemoryProcessTest {
  private static final int HOSTILE_REQUESTS = 80;
  private static final int TENANTS_PER_REQUEST = 10_000;
  private static final int INNOCENT_TENANTS = 10;
  private static final int INNOCENT_SERIES = 2;

  @TempDir Path dir;

  /** A tenant ID of 150 bytes, distinct for each request and series. */
  private static String hostileTenant(int request, int series) {
    StringBuilder b = new StringBuilder(150);
    b.append('r').append(request).append('-').append(series).append('-');
    while (b.length() < 150) {
      b.append('x');
    }
    return b.toString();
  }

  private static TimeSeries series(String name, String tenant, long value, long timestamp) {
    return TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addLabels(Label.newBuilder().setName("service_id").setValue(tenant))
        .addSamples(Sample.newBuilder().setValue(value).setTimestamp(timestamp))
        .build();
  }

  private static byte[] hostileRequest(int request) throws Exception {
    WriteRequest.Builder w = WriteRequest.newBuilder();
    for (int s = 0; s < TENANTS_PER_REQUEST; s++) {
      w.addTimeseries(
          series("m_" + request + "_" + s, hostileTenant(request, s), s, 1_700_000_000_000L));
    }
    return Snappy.compress(w.build().toByteArray());
  }

  private static byte[] innocentRequest(int i) throws Exception {
    WriteRequest.Builder w = WriteRequest.newBuilder();
    for (int t = 0; t < INNOCENT_TENANTS; t++) {
      for (int k = 0; k < INNOCENT_SERIES; k++) {
        w.addTimeseries(series("inn_metric_" + k, "inn-" + t, i, 1_700_000_000_000L + i));
      }
    }
    return Snappy.compress(w.build().toByteArray());
  }

  @Test
  void oneSenderOfManyLongTenantIdsNeitherEndsTheRelayNorFailsAnother() throws Exception {
    try (ScriptedDownstream down = ScriptedDownstream.counting(0, 2);
        RelayProcess relay =
            RelayProcess.start(
                dir, Map.of("relay.downstream.url", down.url(), "relay.server.io-threads", "2"))) {
      relay.awaitListening(Duration.ofSeconds(60));
      String lowered = relay.awaitLine(Duration.ofSeconds(5), l -> l.contains("retained memory:"));
      assertTrue(lowered != null && lowered.contains("lowered"), relay.log());

      AtomicBoolean hostileDone = new AtomicBoolean();
      CompletableFuture<List<SenderConnection.Answer>> innocent =
          CompletableFuture.supplyAsync(
              () -> {
                List<SenderConnection.Answer> answers = new ArrayList<>();
                try (SenderConnection c =
                    new SenderConnection(
                        relay.address(),
                        InetAddress.getByName("127.0.0.2"),
                        "/api/v1/write",
                        15_000)) {
                  // While the hostile sender posts, and a few times after it stopped.
                  for (int i = 0, after = 0; after < 5; i++) {
                    after += hostileDone.get() ? 1 : 0;
                    answers.add(c.post(innocentRequest(i)));
                    Thread.sleep(250);
                  }
                } catch (Exception e) {
                  throw new AssertionError("the innocent sender failed: " + e, e);
                }
                return answers;
              });

      Map<Integer, Integer> hostileAnswers = new TreeMap<>();
      try (SenderConnection hostile =
          new SenderConnection(relay.address(), "/api/v1/write", 60_000)) {
        for (int r = 0; r < HOSTILE_REQUESTS; r++) {
          byte[] body = hostileRequest(r);
          SenderConnection.Answer a;
          try {
            a = hostile.post(body);
          } catch (IOException e) {
            relay.awaitLine(Duration.ofSeconds(5), l -> l.contains("OutOfMemoryError"));
            throw new AssertionError(
                "hostile request " + r + " got no answer (" + e + "):\n" + tail(relay), e);
          }
          hostileAnswers.merge(a.status(), 1, Integer::sum);
        }
      } finally {
        hostileDone.set(true);
      }
      List<SenderConnection.Answer> answers = innocent.get(120, TimeUnit.SECONDS);

      assertTrue(relay.isAlive(), tail(relay));
      Map<Integer, Integer> innocentStatuses = new TreeMap<>();
      for (SenderConnection.Answer a : answers) {
        innocentStatuses.merge(a.status(), 1, Integer::sum);
      }
      assertEquals(Map.of(204, answers.size()), innocentStatuses, "innocent answers");
      for (int t = 0; t < INNOCENT_TENANTS; t++) {
        ScriptedDownstream.TenantCount c = down.counts().get("inn-" + t);
        assertEquals(
            (long) answers.size() * INNOCENT_SERIES, c == null ? 0 : c.series(), "inn-" + t);
      }

      HttpClient http = HttpClient.newHttpClient();
      URI base = URI.create("http://127.0.0.1:" + relay.address().getPort());
      String metrics =
          http.send(
                  HttpRequest.newBuilder(base.resolve("/metrics")).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      double bounds = Scrape.sum(metrics, "relay_memory_retained_bound_bytes", Map.of());
      double heapMax = Scrape.sum(metrics, "jvm_memory_max_bytes", Map.of("area", "heap"));
      double heapUsed = Scrape.sum(metrics, "jvm_memory_used_bytes", Map.of("area", "heap"));
      assertTrue(bounds > 0 && bounds <= (256 << 20) / 3.0 + 1, "retained bounds " + bounds);
      System.out.printf(
          "hostile answers %s, innocent answers %s, heap used %.1f MiB of %.1f MiB, retained"
              + " bounds %.1f MiB%n",
          hostileAnswers,
          innocentStatuses,
          heapUsed / (1 << 20),
          heapMax / (1 << 20),
          bounds / (1 << 20));
      assertEquals(
          200,
          http.send(
                  HttpRequest.newBuilder(base.resolve("/-/ready")).build(),
                  HttpResponse.BodyHandlers.ofString())
              .statusCode());
    }
  }

  private static String tail(RelayProcess relay) {
    List<String> lines = relay.lines();
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
  }
}
