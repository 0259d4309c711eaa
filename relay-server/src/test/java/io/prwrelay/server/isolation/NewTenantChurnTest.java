package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.isolation.SenderConnection.Answer;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testkit.ScriptedDownstream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * One sender sending thousands of tenants never seen before, request after request, over two
 * connections, beside a sender of ten known tenants, against the relay as a child process (256 MB
 * heap): the innocent sender's every write is answered 204 while the churn runs, the churning
 * sender's batches for new tenants past its budget ({@code relay.lanes.new-per-sender-*}) are
 * answered 503 with {@code Retry-After}, and the lanes never pass {@code relay.lanes.max}. The
 * innocent's rate and answer times with and without churn, and with the budget off, are printed
 * (docs/delivery.md, *New tenants*); nothing about them is asserted.
 *
 * <p>Tagged {@code isolation}: it keeps both cores busy, so it runs after the other test classes,
 * with nothing beside it (see relay-server's pom.xml).
 */
@Tag("isolation")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class NewTenantChurnTest {
  private static final Duration PHASE = Duration.ofSeconds(8);
  private static final int NEW_TENANTS_PER_REQUEST = 2_000;
  private static final int MAX_LANES = 20_000;
  private static final int CHURN_BODIES = 60;

  @TempDir Path dir;

  /** What one sender saw in one phase. */
  private record Seen(List<Long> nanos, Map<Integer, Long> statuses, String firstRefusal) {
    double perSecond() {
      return nanos.size() / (double) PHASE.toSeconds();
    }
  }

  @Test
  void anInnocentSenderKeepsItsAnswersWhileAnotherSendsThousandsOfNewTenants() throws Exception {
    // A burst smaller than one churning request: the churn is measured past it.
    Seen[] budgeted = run(Map.of("relay.lanes.new-per-sender-burst", "1000"), false);
    Seen alone = budgeted[0];
    Seen beside = budgeted[1];
    Seen churner = budgeted[2];
    assertEquals(Map.of(204, (long) alone.nanos().size()), alone.statuses());
    assertEquals(
        Map.of(204, (long) beside.nanos().size()),
        beside.statuses(),
        "every write of the innocent sender is accepted while the churn runs");
    assertTrue(churner.statuses().getOrDefault(503, 0L) > 0, churner.statuses().toString());
    assertTrue(
        churner
            .firstRefusal()
            .contains(
                "this sender sent more new tenants than it may open lanes for"
                    + " (relay.lanes.new-per-sender-rate=100,"
                    + " relay.lanes.new-per-sender-burst=1000)"),
        churner.firstRefusal());

    Seen[] patient = run(Map.of("relay.lanes.new-per-sender-burst", "1000"), true);
    assertEquals(
        Map.of(204, (long) patient[1].nanos().size()),
        patient[1].statuses(),
        "every write of the innocent sender is accepted while the churn runs");
    Seen[] unbounded = run(Map.of("relay.lanes.new-per-sender-rate", "0"), false);
    print("new-per-sender-rate=100, burst=1000", budgeted);
    print("new-per-sender-rate=100, burst=1000, churner waits Retry-After", patient);
    print("new-per-sender-rate=0 (no budget)", unbounded);
  }

  private static void print(String label, Seen[] s) {
    System.out.printf(
        "%s: innocent alone %.1f req/s %s; beside the churn %.1f req/s %s; churner %.1f req/s"
            + " %s%n",
        label,
        s[0].perSecond(),
        new Latencies(s[0].nanos()),
        s[1].perSecond(),
        new Latencies(s[1].nanos()),
        s[2].perSecond(),
        s[2].statuses());
  }

  /**
   * Runs the innocent sender alone, then beside the churning one, against a new relay with {@code
   * config}, the churner waiting what {@code Retry-After} says when {@code waitRetryAfter}; returns
   * what the innocent saw alone, beside the churn, and what the churner saw.
   */
  private Seen[] run(Map<String, String> config, boolean waitRetryAfter) throws Exception {
    try (ScriptedDownstream downstream = ScriptedDownstream.counting(0, 2)) {
      Map<String, String> props = new TreeMap<>(config);
      props.put("relay.downstream.url", downstream.url());
      props.put("relay.lanes.max", Integer.toString(MAX_LANES));
      try (RelayProcess relay = RelayProcess.start(dir, props)) {
        relay.awaitListening(Duration.ofSeconds(30));
        InetSocketAddress address = relay.address();
        byte[] known = Snappy.compress(knownTenants());
        send(address, known, PHASE); // warm-up
        Seen alone = send(address, known, PHASE);
        AtomicBoolean stop = new AtomicBoolean();
        Map<Integer, Long> churnStatuses = new ConcurrentHashMap<>();
        List<Long> churnNanos = Collections.synchronizedList(new ArrayList<>());
        AtomicLong refusal = new AtomicLong();
        StringBuilder firstRefusal = new StringBuilder();
        List<Thread> churners = new ArrayList<>();
        for (int c = 0; c < 2; c++) {
          List<byte[]> bodies = churnBodies(c);
          Thread t =
              new Thread(
                  () ->
                      churn(
                          address,
                          bodies,
                          waitRetryAfter,
                          stop,
                          churnStatuses,
                          churnNanos,
                          refusal,
                          firstRefusal),
                  "churner-" + c);
          t.start();
          churners.add(t);
        }
        Thread.sleep(1_000); // the churners' burst is spent
        churnNanos.clear();
        churnStatuses.clear();
        Seen beside = send(address, known, PHASE);
        stop.set(true);
        for (Thread t : churners) {
          t.join(30_000);
        }
        double lanes = lanes(address);
        assertTrue(lanes <= MAX_LANES, "relay_lanes " + lanes + " > relay.lanes.max");
        assertEquals(0, relay.stop(Duration.ofSeconds(30)), relay.log());
        Seen churner;
        synchronized (firstRefusal) {
          churner =
              new Seen(List.copyOf(churnNanos), Map.copyOf(churnStatuses), firstRefusal.toString());
        }
        return new Seen[] {alone, beside, churner};
      }
    }
  }

  /** One request of ten tenants, 100 series each. */
  private static byte[] knownTenants() {
    List<byte[]> series = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      series.add(
          RawProto.series(
              RawProto.label("__name__", "http_requests_total"),
              RawProto.label("instance", "host-" + i),
              RawProto.label("service_id", "team-" + (i % 10)),
              RawProto.sample(i, 1_700_000_000_000L)));
    }
    return RawProto.cat(series.toArray(new byte[0][]));
  }

  /** The innocent sender: one connection, one request after the other, for {@code time}. */
  private static Seen send(InetSocketAddress relay, byte[] body, Duration time) throws IOException {
    List<Long> nanos = new ArrayList<>();
    Map<Integer, Long> statuses = new TreeMap<>();
    try (SenderConnection c = new SenderConnection(relay, "/api/v1/write", 30_000)) {
      long end = System.nanoTime() + time.toNanos();
      while (System.nanoTime() < end) {
        Answer a = c.post(body);
        nanos.add(a.nanos());
        statuses.merge(a.status(), 1L, Long::sum);
      }
    }
    return new Seen(nanos, statuses, "");
  }

  /**
   * The bodies of one churning connection, made before it starts so that making them takes no CPU
   * from the senders and the downstream during the run: each carries {@link
   * #NEW_TENANTS_PER_REQUEST} tenants of its own, one series each.
   */
  private static List<byte[]> churnBodies(int id) throws IOException {
    List<byte[]> bodies = new ArrayList<>();
    for (int r = 0; r < CHURN_BODIES; r++) {
      byte[][] series = new byte[NEW_TENANTS_PER_REQUEST][];
      for (int i = 0; i < series.length; i++) {
        series[i] =
            RawProto.series(
                RawProto.label("__name__", "up"),
                RawProto.label("service_id", "churn-" + id + "-" + r + "-" + i),
                RawProto.sample(1, 1_700_000_000_000L));
      }
      bodies.add(Snappy.compress(RawProto.cat(series)));
    }
    return bodies;
  }

  /**
   * A churning connection: sends {@code bodies} in turn, each right after the answer to the one
   * before, or after the answer's {@code Retry-After} when {@code waitRetryAfter} (a body sent
   * again is a retry to the relay).
   */
  private static void churn(
      InetSocketAddress relay,
      List<byte[]> bodies,
      boolean waitRetryAfter,
      AtomicBoolean stop,
      Map<Integer, Long> statuses,
      List<Long> nanos,
      AtomicLong refusals,
      StringBuilder firstRefusal) {
    try (SenderConnection c = new SenderConnection(relay, "/api/v1/write", 30_000)) {
      for (int r = 0; !stop.get(); r++) {
        Answer a = c.post(bodies.get(r % bodies.size()));
        nanos.add(a.nanos());
        statuses.merge(a.status(), 1L, Long::sum);
        if (a.status() == 503 && refusals.getAndIncrement() == 0) {
          synchronized (firstRefusal) {
            firstRefusal.append(a.body());
          }
        }
        if (waitRetryAfter && a.retryAfter() != null) {
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(a.retryAfter()));
          while (!stop.get() && System.nanoTime() < until) {
            Thread.sleep(10);
          }
        }
      }
    } catch (IOException e) {
      statuses.merge(-1, 1L, Long::sum);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static double lanes(InetSocketAddress relay) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create(
                            "http://" + relay.getHostString() + ":" + relay.getPort() + "/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    return Scrape.sum(r.body(), "relay_lanes", Map.of());
  }
}
