package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.isolation.IdRequests.Part;
import io.prwrelay.server.isolation.IdRequests.Request;
import io.prwrelay.server.isolation.SenderConnection.Answer;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.ScriptedDownstream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What one sender can do to another through what queue mode shares, with the relay as a process
 * under small-container flags ({@link RelayProcess}) and its downstream down (nothing listening on
 * its port until the test starts a {@link ScriptedDownstream} there): the disk's total bound, the
 * directories a request with thousands of new tenants makes, and a queue file damaged while the
 * relay was stopped.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class QueueSharingTest {
  private static final Duration START = Duration.ofSeconds(60);
  private static final Duration DELIVERY = Duration.ofSeconds(90);
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir Path dir;

  /** A port nothing listens on: the downstream is down until a test starts one there. */
  private static int downPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  private static Map<String, String> queueMode(Path queue, int downstreamPort, String... more) {
    Map<String, String> config = new HashMap<>();
    config.put("relay.delivery.mode", "queue");
    config.put("relay.delivery.queue.dir", queue.toString());
    config.put("relay.downstream.url", "http://127.0.0.1:" + downstreamPort + "/api/v1/push");
    config.put("relay.server.io-threads", "2");
    config.put("relay.downstream.retry.initial-backoff", "20ms");
    config.put("relay.downstream.retry.max-backoff", "200ms");
    for (int i = 0; i < more.length; i += 2) {
      config.put(more[i], more[i + 1]);
    }
    return config;
  }

  private static String metrics(InetSocketAddress relay) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + relay.getPort() + "/metrics"))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  private static long tenantDirectories(Path queue) throws IOException {
    try (Stream<Path> s = Files.list(queue)) {
      return s.filter(Files::isDirectory).count();
    }
  }

  /**
   * The total bound reached by a sender spreading its data over 80 small tenants while another
   * sender's one tenant holds the largest queue: the 80 tenants' further writes, and then the large
   * one's, are answered 503 with Retry-After naming the bound, and nothing answered 2xx is dropped:
   * once the downstream is back, every series of the large queue answered 2xx arrives.
   */
  @Test
  void atTheTotalBoundManyTenantsAreRefusedAndEverySeriesAnswered2xxIsDelivered() throws Exception {
    Path queue = dir.resolve("queue");
    int port = downPort();
    List<String> attackers = new ArrayList<>();
    for (int i = 0; i < 80; i++) {
      attackers.add("small" + i);
    }
    List<String> innocentAcked = new ArrayList<>();
    List<String> attackerAcked = new ArrayList<>();
    try (RelayProcess relay =
        RelayProcess.start(
            dir,
            queueMode(
                queue,
                port,
                "relay.delivery.queue.max-bytes",
                "2MiB",
                "relay.delivery.queue.max-tenant-bytes",
                "1MiB",
                "relay.delivery.queue.segment-bytes",
                "64KiB"))) {
      relay.awaitListening(START);
      IdRequests builder = new IdRequests(5);
      try (SenderConnection innocent =
              new SenderConnection(relay.address(), "/api/v1/write", 30_000);
          SenderConnection attacker =
              new SenderConnection(relay.address(), "/api/v1/write", 30_000)) {
        for (int i = 0; i < 30; i++) {
          Request r = builder.build("in" + i, List.of(new Part("innocent", 200, 20)));
          Answer a = innocent.post(r.snappy());
          assertEquals(204, a.status(), a.toString());
          innocentAcked.addAll(r.ids("innocent"));
        }
        Answer refused = null;
        for (int i = 0; i < 200 && refused == null; i++) {
          List<Part> parts = new ArrayList<>();
          for (String t : attackers) {
            parts.add(new Part(t, 10, 20));
          }
          Request r = builder.build("at" + i, parts);
          Answer a = attacker.post(r.snappy());
          if (a.status() == 204) {
            for (String t : attackers) {
              attackerAcked.addAll(r.ids(t));
            }
          } else {
            refused = a;
          }
        }
        assertNotNull(refused, "the total bound is reached");
        System.out.println("total bound, the spreading sender: " + refused);
        assertEquals(503, refused.status(), refused.toString());
        // Its other tenants were queued: no Retry-After, so the sender's retry is not held back
        // (the ledger keeps the queued tenants from being sent again).
        assertNull(refused.retryAfter(), refused.toString());
        assertTrue(
            refused.body().contains("(relay.delivery.queue.max-bytes=2097152)"), refused.body());
        Request more = builder.build("in-more", List.of(new Part("innocent", 200, 20)));
        Answer innocentRefused = innocent.post(more.snappy());
        System.out.println("total bound, the other sender: " + innocentRefused);
        assertEquals(503, innocentRefused.status(), "refused, not making room by dropping");
        assertTrue(
            innocentRefused.body().contains("the queue is full for tenant innocent"),
            innocentRefused.body());
      }
      String before = metrics(relay.address());
      assertEquals(
          0.0, Scrape.sumOr(before, "relay_tenant_series_dropped_total", Map.of(), 0), before);
      assertTrue(
          Scrape.sum(before, "relay_tenant_series_refused_total", Map.of("bound", "total-bytes"))
              > 0,
          before);

      try (ScriptedDownstream back = ScriptedDownstream.recording(port)) {
        DeliveredSeries delivered = new DeliveredSeries(back);
        Await.until(
            "every series answered 2xx delivered",
            DELIVERY,
            () -> {
              delivered.update();
              return delivered.distinct("innocent") >= innocentAcked.size();
            });
        assertEquals(6_000, innocentAcked.size());
        assertEquals(innocentAcked.size(), delivered.distinct("innocent"));
        assertEquals(List.of(), missing(delivered, "innocent", innocentAcked));
        Await.until(
            "the spreading sender's series answered 2xx delivered",
            DELIVERY,
            () -> {
              delivered.update();
              for (String id : attackerAcked) {
                if (delivered.count(id.split("/")[1], id) == 0) {
                  return false;
                }
              }
              return true;
            });
        String after = metrics(relay.address());
        assertEquals(
            0.0, Scrape.sumOr(after, "relay_tenant_series_dropped_total", Map.of(), 0), after);
        System.out.printf(
            "total bound: %d series of one tenant and %d of 80 tenants answered 2xx, all"
                + " delivered; %.0f series refused 503%n",
            innocentAcked.size(),
            attackerAcked.size(),
            Scrape.sumOr(after, "relay_tenant_series_refused_total", Map.of(), 0));
      }
      assertEquals(0, relay.stop(Duration.ofSeconds(30)), relay.log());
    }
  }

  /**
   * The ids of {@code expected} that {@code tenant} never received (delivery is at-least-once: a
   * send whose answer the relay did not see may arrive twice, never not at all).
   */
  private static List<String> missing(
      DeliveredSeries delivered, String tenant, List<String> expected) {
    List<String> out = new ArrayList<>();
    for (String id : expected) {
      if (delivered.count(tenant, id) == 0) {
        out.add(id);
      }
    }
    return out;
  }

  /** One request carrying {@code tenants} new tenants of one series each. */
  private static Request fanOut(IdRequests builder, String id, int tenants) {
    List<Part> parts = new ArrayList<>();
    for (int i = 0; i < tenants; i++) {
      parts.add(new Part(id + "-t" + i, 1));
    }
    return builder.build(id, parts);
  }

  /** An innocent write: when it went out, when it was answered, how. */
  private record Write(long sentNanos, long answeredNanos, int status) {}

  /**
   * A request with 3,000 new tenants, all let through ({@code max-new-tenants-*} raised): their
   * directories are made while another sender writes on; none of its writes waits for them.
   */
  @Test
  void writesOfATenantWithAQueueNeverWaitBehindARequestMakingThousandsOfQueues() throws Exception {
    Path queue = dir.resolve("queue");
    try (RelayProcess relay =
        RelayProcess.start(
            dir,
            queueMode(
                queue,
                downPort(),
                "relay.delivery.queue.max-new-tenants-per-request",
                "10000",
                "relay.delivery.queue.max-new-tenants-per-second",
                "10000"))) {
      relay.awaitListening(START);
      IdRequests builder = new IdRequests(7);
      try (SenderConnection innocent =
              new SenderConnection(relay.address(), "/api/v1/write", 60_000);
          SenderConnection attacker =
              new SenderConnection(relay.address(), "/api/v1/write", 60_000)) {
        for (int i = 0; i < 3; i++) {
          Answer a =
              innocent.post(builder.build("w" + i, List.of(new Part("innocent", 5))).snappy());
          assertEquals(204, a.status(), a.toString());
        }
        Request fan = fanOut(builder, "fan", 3000);
        AtomicReference<Answer> fanAnswer = new AtomicReference<>();
        long[] fanSpan = new long[2];
        Thread t =
            new Thread(
                () -> {
                  try {
                    fanSpan[0] = System.nanoTime();
                    fanAnswer.set(attacker.post(fan.snappy()));
                    fanSpan[1] = System.nanoTime();
                  } catch (IOException e) {
                    throw new RuntimeException(e);
                  }
                },
                "fan-out");
        List<Write> writes = new ArrayList<>();
        t.start();
        for (int i = 0; t.isAlive(); i++) {
          long sent = System.nanoTime();
          Answer a =
              innocent.post(builder.build("d" + i, List.of(new Part("innocent", 5))).snappy());
          writes.add(new Write(sent, System.nanoTime(), a.status()));
        }
        t.join();
        assertNotNull(fanAnswer.get(), "the fan-out request was answered");
        assertEquals(204, fanAnswer.get().status(), fanAnswer.get().toString());
        assertEquals(3001, tenantDirectories(queue), "3,000 new queues and the innocent's");
        long fanNanos = fanSpan[1] - fanSpan[0];
        // What a user would notice: an innocent write waiting for the other request's queues to
        // be made. Its longest wait while they were made is compared with how long they took.
        long longest = 0;
        int during = 0;
        for (Write w : writes) {
          assertEquals(204, w.status());
          if (w.sentNanos() >= fanSpan[0] && w.answeredNanos() <= fanSpan[1]) {
            during++;
          }
          if (w.sentNanos() < fanSpan[1]) {
            longest = Math.max(longest, w.answeredNanos() - Math.max(w.sentNanos(), fanSpan[0]));
          }
        }
        System.out.printf(
            "fan-out: 3,000 new tenant queues made in %d ms; %d innocent writes answered meanwhile,"
                + " the longest wait %d ms%n",
            TimeUnit.NANOSECONDS.toMillis(fanNanos),
            during,
            TimeUnit.NANOSECONDS.toMillis(longest));
        assertTrue(during >= 3, during + " innocent writes answered while the queues were made");
        assertTrue(
            longest < fanNanos / 2,
            "an innocent write waited "
                + TimeUnit.NANOSECONDS.toMillis(longest)
                + " ms of the "
                + TimeUnit.NANOSECONDS.toMillis(fanNanos)
                + " ms the other request's queues took");
      }
      assertEquals(0, relay.stop(Duration.ofSeconds(30)), relay.log());
    }
  }

  /**
   * With the defaults, a request with 1,000 new tenants makes 100 queues; its other tenants are
   * answered 503 with Retry-After naming the bound, counted; a tenant with a queue is unaffected,
   * and once the downstream is back the 100 queued tenants' series arrive.
   */
  @Test
  void aRequestWithMoreNewTenantsThanTheBoundMakesTheBoundOfQueuesAndIsAnswered503()
      throws Exception {
    Path queue = dir.resolve("queue");
    int port = downPort();
    try (RelayProcess relay = RelayProcess.start(dir, queueMode(queue, port))) {
      relay.awaitListening(START);
      IdRequests builder = new IdRequests(9);
      try (SenderConnection c = new SenderConnection(relay.address(), "/api/v1/write", 60_000)) {
        Request known = builder.build("k0", List.of(new Part("innocent", 5)));
        assertEquals(204, c.post(known.snappy()).status());
        Answer a = c.post(fanOut(builder, "fan", 1000).snappy());
        System.out.println("fan-out over the bound: " + a.status() + " " + a.retryAfter());
        assertEquals(503, a.status(), a.toString());
        assertNull(a.retryAfter(), "the request's first tenants were queued");
        assertTrue(
            a.body().contains("(relay.delivery.queue.max-new-tenants-per-request=100)"), a.body());
        Request known2 = builder.build("k1", List.of(new Part("innocent", 5)));
        assertEquals(204, c.post(known2.snappy()).status(), "a tenant with a queue is unaffected");
      }
      assertEquals(101, tenantDirectories(queue));
      String m = metrics(relay.address());
      assertEquals(
          900.0,
          Scrape.sum(
              m, "relay_tenant_series_refused_total", Map.of("bound", "new-tenants-per-request")),
          m);
      try (ScriptedDownstream back = ScriptedDownstream.recording(port)) {
        Await.until("the queued tenants delivered", DELIVERY, () -> back.totalSeries() >= 100 + 10);
        Thread.sleep(500);
        assertEquals(110, back.totalSeries(), "100 new tenants of one series, 2 x 5 innocent");
      }
      assertEquals(0, relay.stop(Duration.ofSeconds(30)), relay.log());
    }
  }

  private static void writeVersion(Path segment, int version) throws IOException {
    try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(4).putInt(0, version), 4);
    }
  }

  private static List<Path> segments(Path tenantDir) throws IOException {
    try (Stream<Path> s = Files.list(tenantDir)) {
      return s.filter(p -> p.toString().endsWith(".seg")).sorted().toList();
    }
  }

  /**
   * A segment header's version set to 0 while the relay was stopped: the relay starts, says so, and
   * delivers every series of every segment; a plausible newer version stops the start with one line
   * saying what to do.
   */
  @Test
  void aDamagedSegmentVersionDoesNotStopTheStartAndEverySegmentIsDelivered() throws Exception {
    Path queue = dir.resolve("queue");
    int port = downPort();
    Map<String, String> config =
        queueMode(queue, port, "relay.delivery.queue.segment-bytes", "64KiB");
    Map<String, List<String>> acked = new HashMap<>();
    try (RelayProcess relay = RelayProcess.start(dir, config)) {
      relay.awaitListening(START);
      IdRequests builder = new IdRequests(11);
      try (SenderConnection c = new SenderConnection(relay.address(), "/api/v1/write", 30_000)) {
        for (String tenant : List.of("damaged", "intact")) {
          for (int i = 0; i < 30; i++) {
            Request r = builder.build(tenant + i, List.of(new Part(tenant, 50, 40)));
            assertEquals(204, c.post(r.snappy()).status());
            acked.computeIfAbsent(tenant, x -> new ArrayList<>()).addAll(r.ids(tenant));
          }
        }
      }
      assertEquals(0, relay.stop(Duration.ofSeconds(30)), relay.log());
    }
    List<Path> damaged = segments(queue.resolve("damaged"));
    assertTrue(damaged.size() >= 2, "segments: " + damaged);

    writeVersion(damaged.get(0), 3);
    try (RelayProcess newer = RelayProcess.start(dir, config)) {
      assertEquals(1, newer.awaitExit(START), newer.log());
      assertEquals(1, newer.lines().size(), newer.log());
      assertTrue(
          newer.lines().get(0).contains("has format version 3, written by a newer relay"),
          newer.log());
      System.out.println("newer segment format: " + newer.lines().get(0));
    }

    writeVersion(damaged.get(1), 0);
    writeVersion(damaged.get(0), 2);
    try (ScriptedDownstream back = ScriptedDownstream.recording(port);
        RelayProcess relay = RelayProcess.start(dir, config)) {
      relay.awaitListening(START);
      String line = relay.awaitLine(Duration.ofSeconds(5), l -> l.contains("had a damaged header"));
      assertNotNull(line, relay.log());
      System.out.println("damaged segment version: " + line);
      DeliveredSeries delivered = new DeliveredSeries(back);
      Await.until(
          "every segment delivered",
          DELIVERY,
          () -> {
            delivered.update();
            return delivered.distinct("damaged") >= 1500 && delivered.distinct("intact") >= 1500;
          });
      for (String tenant : List.of("damaged", "intact")) {
        assertEquals(1500, delivered.distinct(tenant), tenant);
        assertEquals(List.of(), missing(delivered, tenant, acked.get(tenant)), tenant);
      }
      assertEquals(0, relay.stop(Duration.ofSeconds(30)), relay.log());
    }
  }
}
