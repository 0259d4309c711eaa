package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.isolation.IdRequests.Part;
import io.prwrelay.server.isolation.IdRequests.Request;
import io.prwrelay.server.isolation.SenderConnection.Answer;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Queue mode with the relay as a process ({@link RelayProcess}): killed with {@code kill -9} under
 * load, restarted over a queue file damaged while it was stopped, and started on a queue directory
 * it cannot use.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class QueueProcessTest {
  private static final Duration START = Duration.ofSeconds(60);
  private static final Duration DELIVERY = Duration.ofSeconds(60);
  private static final List<String> TENANTS = List.of("t0", "t1", "t2", "t3", "t4");
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir Path dir;

  private Map<String, String> queueMode(Path queue, ScriptedDownstream downstream) {
    return Map.of(
        "relay.delivery.mode", "queue",
        "relay.delivery.queue.dir", queue.toString(),
        "relay.downstream.url", downstream.url(),
        "relay.server.io-threads", "2",
        "relay.downstream.retry.initial-backoff", "20ms",
        "relay.downstream.retry.max-backoff", "200ms");
  }

  /** A downstream answering every request of {@code tenants} with {@code reply}. */
  private static ScriptedDownstream downstream(List<String> tenants, Reply reply)
      throws IOException {
    ScriptedDownstream d = new ScriptedDownstream();
    if (reply != null) {
      for (String t : tenants) {
        d.rule(t, () -> reply);
      }
    }
    return d;
  }

  private static String get(InetSocketAddress relay, String path) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + relay.getPort() + path))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  @Test
  void everySeriesAnswered2xxBeforeAKillNineIsDeliveredAfterTheRestart() throws Exception {
    Path queue = dir.resolve("queue");
    Set<String> acked = ConcurrentHashMap.newKeySet();
    Set<String> sent = ConcurrentHashMap.newKeySet();
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> senders = new ArrayList<>();
    try (ScriptedDownstream down = downstream(TENANTS, Reply.status(503));
        RelayProcess relay = RelayProcess.start(dir, queueMode(queue, down))) {
      relay.awaitListening(START);
      for (int i = 0; i < 3; i++) {
        String name = "s" + i;
        Thread t =
            new Thread(
                () -> {
                  IdRequests builder = new IdRequests(name.hashCode());
                  try (SenderConnection c =
                      new SenderConnection(relay.address(), "/api/v1/write", 10_000)) {
                    for (int seq = 0; !stop.get(); seq++) {
                      List<Part> parts = new ArrayList<>();
                      for (String tenant : TENANTS) {
                        parts.add(new Part(tenant, 4));
                      }
                      Request r = builder.build(name + "." + seq, parts);
                      List<String> ids = new ArrayList<>();
                      for (String tenant : TENANTS) {
                        ids.addAll(r.ids(tenant));
                      }
                      sent.addAll(ids);
                      Answer a = c.post(r.snappy());
                      if (a.status() == 204) {
                        acked.addAll(ids);
                      }
                    }
                  } catch (IOException killed) {
                    // The relay is gone: the request in flight has no answer.
                  }
                },
                name);
        t.setDaemon(true);
        senders.add(t);
        t.start();
      }
      Await.until("2xx answers before the kill", START, () -> acked.size() >= 20 * 400);
      relay.kill();
      stop.set(true);
      for (Thread t : senders) {
        t.join(10_000);
      }
      assertEquals(0, down.totalSeries(), "nothing was accepted before the kill");
    }
    int queuedFiles;
    try (Stream<Path> files = Files.walk(queue)) {
      queuedFiles = (int) files.filter(p -> p.toString().endsWith(".seg")).count();
    }
    assertTrue(queuedFiles >= TENANTS.size(), "segments left by the killed relay: " + queuedFiles);

    try (ScriptedDownstream healthy = downstream(TENANTS, null);
        RelayProcess restarted = RelayProcess.start(dir, queueMode(queue, healthy))) {
      restarted.awaitListening(START);
      DeliveredSeries delivered = new DeliveredSeries(healthy);
      Await.until(
          "every acknowledged series delivered",
          DELIVERY,
          () -> {
            delivered.update();
            for (String id : acked) {
              String tenant = id.split("/")[1];
              if (delivered.count(tenant, id) == 0) {
                return false;
              }
            }
            return true;
          });
      long duplicates = 0;
      long unacknowledged = 0;
      for (String id : sent) {
        int n = delivered.count(id.split("/")[1], id);
        duplicates += Math.max(0, n - 1);
        if (n > 0 && !acked.contains(id)) {
          unacknowledged++;
        }
      }
      assertNotNull(
          restarted.awaitLine(Duration.ZERO, l -> l.contains("to deliver")),
          "the restarted relay says what it found queued:\n" + restarted.log());
      System.out.printf(
          "kill -9: %d series answered 2xx before the kill, all delivered after the restart;"
              + " %d delivered twice; %d delivered that were never answered 2xx%n",
          acked.size(), duplicates, unacknowledged);
      assertEquals(0, restarted.stop(Duration.ofSeconds(30)), restarted.log());
    }
  }

  /** The records of a segment file: offset and length of each, from its layout. */
  private static List<long[]> records(Path segment) throws IOException {
    List<long[]> out = new ArrayList<>();
    try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ)) {
      ByteBuffer length = ByteBuffer.allocate(4);
      for (long at = 8; at + 4 <= ch.size(); ) {
        length.clear();
        ch.read(length, at);
        long bytes = length.getInt(0) + 8L;
        out.add(new long[] {at, bytes});
        at += bytes;
      }
    }
    return out;
  }

  private static Path onlySegment(Path tenantDir) throws IOException {
    try (Stream<Path> files = Files.list(tenantDir)) {
      List<Path> segments = files.filter(p -> p.toString().endsWith(".seg")).toList();
      assertEquals(1, segments.size(), "segments of " + tenantDir + ": " + segments);
      return segments.get(0);
    }
  }

  @Test
  void damagedQueueFilesAreCutWithALogLineAndTheIntactRecordsDelivered() throws Exception {
    Path queue = dir.resolve("queue");
    List<String> tenants = List.of("flipped", "torn");
    int requests = 30;
    Map<String, List<Request>> sent = new HashMap<>();
    try (ScriptedDownstream down = downstream(tenants, Reply.status(503));
        RelayProcess relay = RelayProcess.start(dir, queueMode(queue, down))) {
      relay.awaitListening(START);
      IdRequests builder = new IdRequests(5);
      try (SenderConnection c = new SenderConnection(relay.address(), "/api/v1/write", 10_000)) {
        for (String tenant : tenants) {
          for (int i = 0; i < requests; i++) {
            Request r = builder.build(tenant + "." + i, List.of(new Part(tenant, 10)));
            sent.computeIfAbsent(tenant, t -> new ArrayList<>()).add(r);
            assertEquals(204, c.post(r.snappy()).status());
          }
        }
      }
      assertEquals(0, relay.stop(Duration.ofSeconds(30)), relay.log());
    }

    // One byte flipped inside record 20 of "flipped"; the last record of "torn" cut in half.
    Path flipped = onlySegment(queue.resolve("flipped"));
    List<long[]> flippedRecords = records(flipped);
    assertEquals(requests, flippedRecords.size());
    long[] damaged = flippedRecords.get(20);
    long flippedSize = Files.size(flipped);
    try (FileChannel ch =
        FileChannel.open(flipped, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      long at = damaged[0] + damaged[1] / 2;
      ch.read(b, at);
      b.put(0, (byte) (b.get(0) ^ 0x5A));
      b.rewind();
      ch.write(b, at);
    }
    Path torn = onlySegment(queue.resolve("torn"));
    List<long[]> tornRecords = records(torn);
    long[] last = tornRecords.get(requests - 1);
    try (FileChannel ch = FileChannel.open(torn, StandardOpenOption.WRITE)) {
      ch.truncate(last[0] + last[1] / 2);
    }
    long expectedCut = (flippedSize - damaged[0]) + last[1] / 2;

    try (ScriptedDownstream healthy = downstream(tenants, null);
        RelayProcess restarted = RelayProcess.start(dir, queueMode(queue, healthy))) {
      restarted.awaitListening(START);
      for (String tenant : tenants) {
        String line =
            restarted.awaitLine(
                Duration.ZERO, l -> l.contains("queue of tenant " + tenant + ": cut "));
        assertNotNull(line, "cut of " + tenant + " logged:\n" + restarted.log());
        System.out.println("damaged queue: " + line);
      }
      assertTrue(
          restarted.awaitLine(
                  Duration.ZERO,
                  l ->
                      l.contains(
                          "cut " + (flippedSize - damaged[0]) + " bytes at offset " + damaged[0]))
              != null,
          restarted.log());
      assertTrue(
          restarted.awaitLine(
                  Duration.ZERO,
                  l -> l.contains("cut " + last[1] / 2 + " bytes at offset " + last[0]))
              != null,
          restarted.log());
      DeliveredSeries delivered = new DeliveredSeries(healthy);
      Map<String, Integer> intact = Map.of("flipped", 20, "torn", requests - 1);
      Await.until(
          "intact records delivered",
          DELIVERY,
          () -> {
            delivered.update();
            return delivered.distinct("flipped") == 20 * 10
                && delivered.distinct("torn") == (requests - 1) * 10;
          });
      for (String tenant : tenants) {
        Set<String> expected = new HashSet<>();
        for (Request r : sent.get(tenant).subList(0, intact.get(tenant))) {
          expected.addAll(r.ids(tenant));
        }
        assertEquals(List.of(), delivered.exactlyOnce(tenant, expected), tenant);
      }
      String metrics = get(restarted.address(), "/metrics");
      assertEquals(
          expectedCut,
          Scrape.sumOr(metrics, "relay_queue_tail_cut_bytes_total", Map.of(), 0),
          0.0,
          metrics);
      assertTrue(restarted.isAlive());
      assertEquals(0, restarted.stop(Duration.ofSeconds(30)), restarted.log());
    }

    // Started once more on the same directory: nothing left to cut, nothing left to deliver.
    try (ScriptedDownstream healthy = downstream(tenants, null);
        RelayProcess again = RelayProcess.start(dir, queueMode(queue, healthy))) {
      again.awaitListening(START);
      assertNull(again.awaitLine(Duration.ZERO, l -> l.contains(": cut ")), again.log());
      assertEquals(
          0.0,
          Scrape.sumOr(
              get(again.address(), "/metrics"), "relay_queue_tail_cut_bytes_total", Map.of(), 0));
      assertEquals(0, again.stop(Duration.ofSeconds(30)), again.log());
      assertEquals(0, healthy.totalSeries(), "everything was delivered by the previous run");
    }
  }

  /** Starts the relay on {@code queueDir} and expects it to exit at once with one line. */
  private String unusable(Path queueDir) throws Exception {
    try (ScriptedDownstream down = downstream(List.of(), null);
        RelayProcess relay = RelayProcess.start(dir, queueMode(queueDir, down))) {
      int exit = relay.awaitExit(START);
      List<String> lines = relay.lines();
      assertNotEquals(0, exit, relay.log());
      assertEquals(1, lines.size(), "one line, no stack trace:\n" + relay.log());
      assertTrue(lines.get(0).contains(queueDir.toString()), lines.get(0));
      return lines.get(0);
    }
  }

  @Test
  void anUnusableQueueDirectoryStopsTheStartWithOneLineNamingIt() throws Exception {
    Path file = Files.writeString(dir.resolve("a-file"), "not a directory");
    System.out.println("unusable queue dir: " + unusable(file));
    System.out.println("unusable queue dir: " + unusable(file.resolve("queue")));
    Path lockedOut = Files.createDirectories(dir.resolve("lock-is-a-directory"));
    Files.createDirectories(lockedOut.resolve("lock"));
    System.out.println("unusable queue dir: " + unusable(lockedOut));
    Path shared = dir.resolve("shared");
    try (ScriptedDownstream down = downstream(List.of(), null);
        RelayProcess first = RelayProcess.start(dir, queueMode(shared, down))) {
      first.awaitListening(START);
      String line = unusable(shared);
      assertTrue(line.contains("in use by another process"), line);
      System.out.println("unusable queue dir: " + line);
      assertEquals(0, first.stop(Duration.ofSeconds(30)), first.log());
    }
  }

  @Test
  void aTenantWhoseQueueCannotBeWrittenGets503WhileOthersGet204() throws Exception {
    Path queue = Files.createDirectories(dir.resolve("queue"));
    Files.writeString(queue.resolve("broken"), "a file where the tenant's directory belongs");
    // The downstream is healthy: without direct delivery off, every batch would be delivered
    // directly and the queue never written.
    try (RelayFixture relay =
        new RelayFixture(
            Map.of(
                "relay.delivery.mode",
                "queue",
                "relay.delivery.queue.dir",
                queue.toString(),
                "relay.delivery.queue.direct-timeout",
                "0"))) {
      IdRequests builder = new IdRequests(9);
      try (SenderConnection c =
          new SenderConnection(relay.relay.address(), "/api/v1/write", 10_000)) {
        for (int i = 0; i < 5; i++) {
          Answer broken = c.post(builder.build("b" + i, List.of(new Part("broken", 3))).snappy());
          assertEquals(503, broken.status(), broken.toString());
          assertTrue(broken.body().contains("cannot write the tenant's queue"), broken.body());
          Answer mixed =
              c.post(
                  builder
                      .build("m" + i, List.of(new Part("broken", 3), new Part("fine", 3)))
                      .snappy());
          assertEquals(503, mixed.status(), mixed.toString());
          Answer fine = c.post(builder.build("f" + i, List.of(new Part("fine", 3))).snappy());
          assertEquals(204, fine.status(), fine.toString());
        }
        System.out.println(
            "unwritable tenant queue: "
                + c.post(builder.build("x", List.of(new Part("broken", 1))).snappy()));
      }
      DeliveredSeries delivered = new DeliveredSeries(relay.downstream);
      Await.until(
          "the fine tenant delivered",
          Duration.ofSeconds(10),
          () -> delivered.update().distinct("fine") == 30);
      assertEquals(0, delivered.distinct("broken"));
    }
  }
}
