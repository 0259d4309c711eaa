package io.prwrelay.server.it;

import static io.prwrelay.testing.RawProto.groupStarts;
import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.sample;
import static io.prwrelay.testing.RawProto.series;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * One sender's malformed series must not fail other senders' data, through a real relay socket. The
 * relay forwards what follows the tenant label of a series unread, and its lane merges one tenant's
 * batches of different senders into one downstream request. Here several innocent senders of tenant
 * {@code svc-3} write beside one whose series carries the tenant label followed by an unterminated
 * group, and the downstream refuses (400) every request its generated protobuf classes cannot
 * parse, as Cortex does. Every innocent request is answered 204 and each of its series arrives
 * exactly once; only the bad sender gets 400, with the downstream's message.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class MalformedSeriesIsolationTest {
  private static final String TENANT = "svc-3";
  private static final int INNOCENT_SENDERS = 6;
  private static final int REQUESTS = 25;

  /** The value of the {@code sender} label of innocent series, followed by the sender's index. */
  private static final String INNOCENT = "innocent-";

  /** Innocent request {@code seq} of sender {@code sender}: one series of its own. */
  private static byte[] innocent(int sender, int seq) {
    return series(
        label("__name__", "up"),
        label("sender", INNOCENT + sender),
        label("seq", Integer.toString(seq)),
        label("service_id", TENANT),
        sample(1, 1_000L + seq));
  }

  /**
   * The tenant label, then a label whose bytes open a group that never ends: the relay reads up to
   * the tenant label and forwards the rest unread.
   */
  private static byte[] malformed() {
    return series(label("service_id", TENANT), len(1, groupStarts(1, 1)), sample(1, 1));
  }

  @Test
  void onlyTheSenderOfAMalformedSeriesIsRejectedAndEveryInnocentSeriesArrivesOnce()
      throws Exception {
    Queue<byte[]> accepted = new ConcurrentLinkedQueue<>();
    AtomicInteger rejectedWithInnocents = new AtomicInteger();
    byte[] innocentMark = INNOCENT.getBytes(StandardCharsets.UTF_8);
    ExecutorService pool = Executors.newFixedThreadPool(INNOCENT_SENDERS + 1);
    try (RelayFixture relay =
        new RelayFixture(
            // One request in flight per tenant: what arrives meanwhile is merged.
            Map.of("relay.lanes.max-concurrent-sends", "1"),
            d ->
                d.bodyRule(
                    TENANT,
                    body -> {
                      try {
                        WriteRequest.parseFrom(body);
                      } catch (InvalidProtocolBufferException e) {
                        if (indexOf(body, innocentMark) >= 0) {
                          rejectedWithInnocents.incrementAndGet();
                        }
                        return Reply.status(400, "proto: " + e.getMessage());
                      }
                      accepted.add(body);
                      return Reply.slow(Duration.ofMillis(10));
                    }))) {
      List<Future<List<HttpResponse<String>>>> innocents = new ArrayList<>();
      for (int s = 0; s < INNOCENT_SENDERS; s++) {
        int sender = s;
        innocents.add(pool.submit(() -> writeAll(relay, seq -> innocent(sender, seq))));
      }
      Future<List<HttpResponse<String>>> bad =
          pool.submit(() -> writeAll(relay, seq -> malformed()));

      for (Future<List<HttpResponse<String>>> f : innocents) {
        for (HttpResponse<String> r : f.get(60, TimeUnit.SECONDS)) {
          assertEquals(204, r.statusCode(), "an innocent sender: " + r.body());
        }
      }
      for (HttpResponse<String> r : bad.get(60, TimeUnit.SECONDS)) {
        assertEquals(400, r.statusCode(), r.body());
        assertTrue(r.body().contains(TENANT), r.body());
        assertTrue(r.body().contains("proto: "), "the downstream's message: " + r.body());
      }
      assertTrue(
          rejectedWithInnocents.get() > 0,
          "the malformed series was merged with innocent ones at least once");

      Map<String, Integer> delivered = new TreeMap<>();
      for (byte[] body : accepted) {
        for (TimeSeries ts : WriteRequest.parseFrom(body).getTimeseriesList()) {
          delivered.merge(labelsOf(ts), 1, Integer::sum);
        }
      }
      assertEquals(INNOCENT_SENDERS * REQUESTS, delivered.size(), "every innocent series");
      delivered.forEach((s, n) -> assertEquals(1, n, s + " delivered exactly once"));

      String metrics = relay.get("/metrics").body();
      double splitSends =
          Scrape.sum(metrics, "relay_tenant_split_sends_total", Map.of("tenant", TENANT));
      assertTrue(splitSends > 0, "split sends counted: " + splitSends);
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Writes {@link #REQUESTS} requests one after the other, request {@code seq} made by {@code
   * make}.
   */
  private static List<HttpResponse<String>> writeAll(RelayFixture relay, IntFunction<byte[]> make)
      throws Exception {
    List<HttpResponse<String>> answers = new ArrayList<>();
    for (int seq = 0; seq < REQUESTS; seq++) {
      answers.add(relay.write(make.apply(seq)));
    }
    return answers;
  }

  private static String labelsOf(TimeSeries ts) {
    StringBuilder b = new StringBuilder();
    for (Label l : ts.getLabelsList()) {
      b.append(l.getName()).append('=').append(l.getValue()).append(',');
    }
    return b.toString();
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
