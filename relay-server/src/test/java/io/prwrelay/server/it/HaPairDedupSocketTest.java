package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * A Prometheus HA pair through a relay socket, in front of a downstream that deduplicates as Cortex
 * and Mimir do: each push is judged by its first series' {@code cluster} and {@code __replica__};
 * led by the standby replica (r2) it is dropped whole (202), led by the elected one (r1), or by a
 * series without both labels, accepted whole. The tenant's lane is forced to coalesce (one request
 * in flight, each answered after 10 ms), and each replica writes from several connections at once,
 * as Prometheus's shards do, beside a sender without HA labels. Every sender request is answered
 * 204; no standby sample is stored, and every sample of the elected replica and of the other sender
 * is stored exactly once.
 */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class HaPairDedupSocketTest {
  private static final String TENANT = "svc-ha";
  private static final int SHARDS = 4;
  private static final int REQUESTS = 30;
  private static final int SERIES = 5;

  /** Request {@code seq} of shard {@code shard} of {@code replica} ({@code null}: no HA labels). */
  private static byte[] request(String replica, int shard, int seq) {
    WriteRequest.Builder w = WriteRequest.newBuilder();
    for (int i = 0; i < SERIES; i++) {
      TimeSeries.Builder ts = TimeSeries.newBuilder();
      ts.addLabels(label("__name__", "up"));
      if (replica != null) {
        ts.addLabels(label("__replica__", replica));
        ts.addLabels(label("cluster", "prod"));
      }
      ts.addLabels(label("series", shard + "-" + i));
      ts.addLabels(label("service_id", TENANT));
      ts.addSamples(Sample.newBuilder().setValue(seq).setTimestamp(1_000L * (seq + 1)));
      w.addTimeseries(ts);
    }
    return w.build().toByteArray();
  }

  private static Label label(String name, String value) {
    return Label.newBuilder().setName(name).setValue(value).build();
  }

  private static String value(TimeSeries ts, String name) {
    for (Label l : ts.getLabelsList()) {
      if (l.getName().equals(name)) {
        return l.getValue();
      }
    }
    return "";
  }

  @Test
  void noStandbySampleIsStoredAndNoElectedSampleDroppedWhileTheLaneCoalesces() throws Exception {
    Queue<TimeSeries> stored = new ConcurrentLinkedQueue<>();
    AtomicInteger dropped = new AtomicInteger();
    AtomicInteger merged = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(2 * SHARDS + 1);
    try (RelayFixture relay =
        new RelayFixture(
            Map.of("relay.lanes.max-concurrent-sends", "1"),
            d ->
                d.bodyRule(
                    TENANT,
                    body -> {
                      List<TimeSeries> series;
                      try {
                        series = WriteRequest.parseFrom(body).getTimeseriesList();
                      } catch (InvalidProtocolBufferException e) {
                        return Reply.status(400, e.getMessage());
                      }
                      Set<String> requests = new HashSet<>();
                      for (TimeSeries ts : series) {
                        requests.add(
                            value(ts, "__replica__")
                                + value(ts, "series").split("-")[0]
                                + "@"
                                + ts.getSamples(0).getTimestamp());
                      }
                      if (requests.size() > 1) {
                        merged.incrementAndGet();
                      }
                      TimeSeries first = series.get(0);
                      String cluster = value(first, "cluster");
                      String replica = value(first, "__replica__");
                      if (!cluster.isEmpty() && !replica.isEmpty() && !replica.equals("r1")) {
                        dropped.addAndGet(series.size());
                        return Reply.status(202); // the standby's push, dropped whole
                      }
                      stored.addAll(series);
                      return Reply.slow(Duration.ofMillis(10));
                    }))) {
      List<Future<List<HttpResponse<String>>>> senders = new ArrayList<>();
      for (String replica : new String[] {"r1", "r2"}) {
        for (int s = 0; s < SHARDS; s++) {
          int shard = s;
          senders.add(pool.submit(() -> writeAll(relay, replica, shard)));
        }
      }
      senders.add(pool.submit(() -> writeAll(relay, null, SHARDS)));
      for (Future<List<HttpResponse<String>>> f : senders) {
        for (HttpResponse<String> r : f.get(90, TimeUnit.SECONDS)) {
          assertEquals(204, r.statusCode(), r.body());
        }
      }
      Map<String, Integer> byReplicaAndSample = new TreeMap<>();
      for (TimeSeries ts : stored) {
        String replica = value(ts, "__replica__");
        assertTrue(!replica.equals("r2"), "a standby sample was stored: " + ts);
        byReplicaAndSample.merge(
            (replica.isEmpty() ? "none" : replica)
                + " "
                + value(ts, "series")
                + " @"
                + ts.getSamples(0).getTimestamp(),
            1,
            Integer::sum);
      }
      assertEquals(
          (SHARDS + 1) * REQUESTS * SERIES,
          byReplicaAndSample.size(),
          "every sample of r1 and of the sender without HA labels");
      byReplicaAndSample.forEach((k, n) -> assertEquals(1, n, k + " stored once"));
      assertEquals(SHARDS * REQUESTS * SERIES, dropped.get(), "every standby sample dropped");
      assertTrue(merged.get() > 0, "sender requests were merged into one push");
    } finally {
      pool.shutdownNow();
    }
  }

  private static List<HttpResponse<String>> writeAll(RelayFixture relay, String replica, int shard)
      throws Exception {
    List<HttpResponse<String>> answers = new ArrayList<>();
    for (int seq = 0; seq < REQUESTS; seq++) {
      answers.add(relay.write(request(replica, shard, seq)));
    }
    return answers;
  }
}
