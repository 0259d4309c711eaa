package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.it.PrometheusProcess.Series;
import io.prwrelay.server.testing.Await;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Proves the {@link PrometheusProcess} harness against a real Prometheus, without any relay code:
 * Prometheus as a remote-write receiver fed by hand, and Prometheus as a remote-write sender whose
 * relabelling spreads its series over three {@code service_id} values.
 */
@ExtendWith(PrometheusProcess.Required.class)
class PrometheusHarnessTest {
  private static final Duration SENDER_DEADLINE = Duration.ofSeconds(60);

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void receiverStoresAHandWrittenRemoteWriteRequest() throws Exception {
    try (PrometheusProcess receiver =
        PrometheusProcess.start(
            PrometheusProcess.receiverConfig(), PrometheusProcess.REMOTE_WRITE_RECEIVER_FLAG)) {
      long timestamp = System.currentTimeMillis();
      double first = ThreadLocalRandom.current().nextDouble(-1e6, 1e6);
      double second = ThreadLocalRandom.current().nextDouble(-1e6, 1e6);
      WriteRequest request =
          WriteRequest.newBuilder()
              .addTimeseries(series("up_demo", "node-a", "t1", first, timestamp))
              .addTimeseries(series("up_demo", "node-b", "t2", second, timestamp))
              .build();

      HttpResponse<String> response =
          PrometheusProcess.postRemoteWrite(receiver.remoteWriteUrl(), request.toByteArray());
      assertTrue(
          response.statusCode() == 204 || response.statusCode() == 200,
          () ->
              "HTTP " + response.statusCode() + ": " + response.body() + "\n" + receiver.logTail());

      List<Series> t1 = receiver.query("up_demo{service_id=\"t1\"}");
      assertEquals(1, t1.size(), () -> "series: " + t1);
      assertEquals(
          Map.of("__name__", "up_demo", "instance", "node-a", "service_id", "t1"),
          t1.get(0).labels());
      assertEquals(first, t1.get(0).asDouble(), 0.0, "value must round-trip exactly");

      List<Series> stamp = receiver.query("timestamp(up_demo{service_id=\"t2\"})");
      assertEquals(1, stamp.size(), () -> "series: " + stamp);
      assertEquals(timestamp / 1000.0, stamp.get(0).asDouble(), 0.0, "sample timestamp");
      List<Series> nodeB = receiver.query("up_demo{instance=\"node-b\"}");
      assertEquals(1, nodeB.size(), () -> "series: " + nodeB);
      assertEquals("t2", nodeB.get(0).label("service_id"));
      assertEquals(second, nodeB.get(0).asDouble(), 0.0, "value must round-trip exactly");

      assertEquals(List.of(), receiver.query("up_demo{service_id=\"t3\"}"));
    }
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void senderSpreadsItsSeriesOverThreeServiceIds() throws Exception {
    try (PrometheusProcess receiver =
            PrometheusProcess.start(
                PrometheusProcess.receiverConfig(), PrometheusProcess.REMOTE_WRITE_RECEIVER_FLAG);
        PrometheusProcess sender =
            PrometheusProcess.start(
                port -> PrometheusProcess.senderConfig(receiver.remoteWriteUrl(), port))) {
      String fromSender = "{job=\"" + PrometheusProcess.SENDER_JOB + "\"}";
      Set<String> allServiceIds = Set.of("tenant-0", "tenant-1", "tenant-2");

      boolean arrived =
          Await.within(
              SENDER_DEADLINE,
              () ->
                  serviceIds(receiver.query("count by (service_id) (" + fromSender + ")"))
                          .equals(allServiceIds)
                      && !receiver.query("up" + fromSender).isEmpty());
      assertTrue(
          arrived,
          () ->
              "receiver saw service_ids "
                  + serviceIds(receiver.query("count by (service_id) (" + fromSender + ")"))
                  + " within "
                  + SENDER_DEADLINE
                  + "\n"
                  + sender.logTail()
                  + receiver.logTail());

      assertEquals(
          List.of(),
          receiver.query("count({job=\"" + PrometheusProcess.SENDER_JOB + "\", service_id=\"\"})"),
          "every forwarded series carries service_id");
      assertEquals(
          List.of(),
          receiver.query("count by (__tmp_service_hash) ({__tmp_service_hash!=\"\"})"),
          "the temporary hash label is dropped");
      assertEquals(
          List.of(),
          sender.query("count({service_id!=\"\"})"),
          "service_id exists only on the wire, not in the sender's TSDB");

      receiver.assertServiceIdPerMetricName();
      assertEquals(1.0, receiver.query("up" + fromSender).get(0).asDouble(), 0.0);
    }
  }

  private static TimeSeries series(
      String name, String instance, String serviceId, double value, long timestamp) {
    return TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addLabels(Label.newBuilder().setName("instance").setValue(instance))
        .addLabels(Label.newBuilder().setName("service_id").setValue(serviceId))
        .addSamples(Sample.newBuilder().setValue(value).setTimestamp(timestamp))
        .build();
  }

  private static Set<String> serviceIds(List<Series> result) {
    Set<String> ids = new TreeSet<>();
    for (Series series : result) {
      ids.add(Objects.toString(series.label("service_id"), "(none)"));
    }
    return ids;
  }
}
