package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.isolation.IdRequests.Part;
import io.prwrelay.server.isolation.IdRequests.Request;
import io.prwrelay.server.isolation.SenderConnection.Answer;
import io.prwrelay.testing.V2RawProto;
import io.prwrelay.testkit.ScriptedDownstream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * The attack of {@code it/ConversionBoundTest} at full size, against the relay as a process with
 * the memory of a small container ({@link RelayProcess#SMALL_CONTAINER}: 256 MiB of heap and of
 * direct memory, exit at the first {@code OutOfMemoryError}) and two event loops, everything else
 * at its default: a request of about 50 KB whose 1 MiB symbol is referenced so often that the
 * requests the relay would build of it take 100 MiB or more, sent again and again from three
 * connections at once, while another sender writes ten tenants' series.
 *
 * <p>With the defaults the relay admits 64 MiB of request memory ({@code
 * relay.server.max-inflight-bytes=auto}), 32 MiB of it per client address. The requests built of
 * the attack are sized before they are allocated and never fit one client's share: every attack
 * request is answered 413 naming the key (or 503 with {@code Retry-After} while the attacker's
 * share is in use), nothing of it reaches the downstream, and the relay stays up. The attacker
 * writes from 127.0.0.2, the other sender from 127.0.0.1: two clients. The other sender's requests
 * are all answered 204 (a 503 with {@code Retry-After} is retried, as Prometheus does), and each of
 * its series arrives exactly once.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ConversionBoundProcessTest {
  private static final Duration START = Duration.ofSeconds(60);
  private static final String SYMBOL = "x".repeat(1 << 20);
  private static final List<String> TENANTS =
      IntStream.range(0, 10).mapToObj(i -> "innocent-" + i).toList();
  private static final int ATTACKERS = 3;
  private static final int ATTACKS_PER_CONNECTION = 20;
  private static final String KEY = "relay.server.max-inflight-bytes";

  @TempDir Path dir;

  @Test
  void aSymbolInEverySeriesConvertedToPrw1IsRefusedAndHarmsNoOtherSender() throws Exception {
    // The attack as found: 120 series of 2 tenants, 120 MiB once converted to PRW 1.0.
    runAttack("v1", V2RawProto.symbolInEverySeries(SYMBOL, 120, 2));
  }

  @Test
  void aSymbolInEveryTenantsTableIsRefusedAndHarmsNoOtherSender() throws Exception {
    // One series of each of 100 tenants: 100 PRW 2.0 requests carrying the symbol each.
    runAttack("v2", V2RawProto.symbolInEverySeries(SYMBOL, 100, 100));
  }

  private void runAttack(String protocol, byte[] attack) throws Exception {
    byte[] body = Snappy.compress(attack);
    assertTrue(body.length < 64 << 10, "about 50 KB on the wire: " + body.length);
    ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<Answer> attackAnswers = new ConcurrentLinkedQueue<>();
    List<Request> innocentRequests = new ArrayList<>();
    int[] innocentAnswers = new int[2]; // 204s, 503s retried
    try (ScriptedDownstream down = new ScriptedDownstream();
        RelayProcess relay =
            RelayProcess.start(
                dir,
                Map.of(
                    "relay.downstream.url",
                    down.url(),
                    "relay.downstream.protocol",
                    protocol,
                    "relay.server.io-threads",
                    "2"))) {
      relay.awaitListening(START);
      InetSocketAddress address = relay.address();
      AtomicBoolean attacking = new AtomicBoolean(true);
      List<Thread> attackers = new ArrayList<>();
      for (int i = 0; i < ATTACKERS; i++) {
        Thread t =
            new Thread(() -> attack(address, body, attackAnswers, failures), "attacker-" + i);
        t.setDaemon(true);
        attackers.add(t);
      }
      Thread innocent =
          new Thread(
              () -> {
                IdRequests builder = new IdRequests(7);
                try (SenderConnection c = new SenderConnection(address, "/api/v1/write", 30_000)) {
                  for (int seq = 0; attacking.get() || seq < 20; seq++) {
                    List<Part> parts = new ArrayList<>();
                    for (String tenant : TENANTS) {
                      parts.add(new Part(tenant, 5));
                    }
                    Request r = builder.build("innocent." + seq, parts);
                    innocentRequests.add(r);
                    for (int attempt = 0; ; attempt++) {
                      Answer a = c.post(r.snappy());
                      if (a.status() == 204) {
                        innocentAnswers[0]++;
                        break;
                      }
                      if (a.status() != 503 || a.retryAfter() == null || attempt == 50) {
                        failures.add("innocent " + r.id() + " answered " + a);
                        return;
                      }
                      innocentAnswers[1]++;
                      Thread.sleep(50);
                    }
                  }
                } catch (IOException | InterruptedException e) {
                  failures.add("innocent: " + e);
                }
              },
              "innocent");
      innocent.setDaemon(true);
      innocent.start();
      attackers.forEach(Thread::start);
      for (Thread t : attackers) {
        t.join(TimeUnit.SECONDS.toMillis(120));
        assertFalse(t.isAlive(), t.getName() + " did not finish");
      }
      attacking.set(false);
      innocent.join(TimeUnit.SECONDS.toMillis(60));
      assertFalse(innocent.isAlive(), "the innocent sender did not finish");

      assertTrue(relay.isAlive(), "the relay exited:\n" + relay.log());
      assertEquals(List.of(), List.copyOf(failures), relay.log());
      assertEquals(ATTACKERS * ATTACKS_PER_CONNECTION, attackAnswers.size());
      int refused413 = 0;
      for (Answer a : attackAnswers) {
        if (a.status() == 413) {
          refused413++;
          assertTrue(
              a.body().contains(KEY + "-per-client=33554432"), "413 names the key: " + a.body());
        } else {
          assertEquals(503, a.status(), a.toString());
          assertNotNull(a.retryAfter(), a.toString());
          assertTrue(a.body().contains(KEY), "503 names the key: " + a.body());
        }
      }
      assertTrue(refused413 > 0, "the attack never fits: 413 at least once");

      DeliveredSeries delivered = new DeliveredSeries(down).update();
      assertEquals(List.of(), delivered.misrouted());
      Set<String> attacked = new HashSet<>(down.byTenant().keySet());
      attacked.removeIf(t -> !t.matches("t[0-9]+"));
      assertEquals(Set.of(), attacked, "nothing of the attack reaches the downstream");
      for (String tenant : TENANTS) {
        List<String> ids = new ArrayList<>();
        for (Request r : innocentRequests) {
          ids.addAll(r.ids(tenant));
        }
        assertEquals(List.of(), delivered.exactlyOnce(tenant, ids), tenant);
      }
      assertEquals(200, healthy(address), "the relay answers /-/healthy");
      assertTrue(
          relay.lines().stream().noneMatch(l -> l.contains("OutOfMemoryError")), relay.log());
      System.out.printf(
          "protocol %s: attacker %d answers (%d 413), innocent %d requests 204 (%d 503 retried)%n",
          protocol, attackAnswers.size(), refused413, innocentAnswers[0], innocentAnswers[1]);
    }
  }

  /** One attacker connection from 127.0.0.2: the attack request, again and again. */
  private static void attack(
      InetSocketAddress relay,
      byte[] body,
      ConcurrentLinkedQueue<Answer> answers,
      ConcurrentLinkedQueue<String> failures) {
    try (SenderConnection c =
        new SenderConnection(relay, InetAddress.getByName("127.0.0.2"), "/api/v1/write", 30_000)) {
      for (int i = 0; i < ATTACKS_PER_CONNECTION; i++) {
        answers.add(c.postV2(body));
      }
    } catch (IOException e) {
      failures.add(Thread.currentThread().getName() + ": " + e);
    }
  }

  private static int healthy(InetSocketAddress relay) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + relay.getPort() + "/-/healthy"))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }
}
