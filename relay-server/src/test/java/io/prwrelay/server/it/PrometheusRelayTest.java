package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.protobuf.InvalidProtocolBufferException;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.it.PrometheusProcess.Series;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.ForwardedRequests;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The relay between real Prometheus servers: a Prometheus that scrapes itself and remote-writes
 * every series with {@code service_id} = {@code tenant-0|1|2} (see {@link
 * PrometheusProcess#senderConfig}) sends to the relay, which forwards one request per tenant either
 * to a recording {@link ScriptedDownstream} or to a second Prometheus running as remote-write
 * receiver.
 *
 * <p>The sender's own remote-storage counters, scraped into its TSDB, must show that every request
 * it made was accepted: in Prometheus 2.42 {@value #SAMPLES_SENT} counts every sample of every send
 * attempt, {@value #SAMPLES_RETRIED} the samples of attempts that failed recoverably (5xx, 429,
 * transport errors) and {@value #SAMPLES_FAILED} those dropped after a non-recoverable failure
 * (other 4xx).
 */
@ExtendWith(PrometheusProcess.Required.class)
class PrometheusRelayTest {
  /** Samples of every send attempt, successful or not. */
  static final String SAMPLES_SENT = "prometheus_remote_storage_samples_total";

  /** Samples of send attempts that failed with a recoverable error and were retried. */
  static final String SAMPLES_RETRIED = "prometheus_remote_storage_samples_retried_total";

  /** Samples given up after a non-recoverable send error. */
  static final String SAMPLES_FAILED = "prometheus_remote_storage_samples_failed_total";

  /** Metadata entries given up after a non-recoverable send error. */
  static final String METADATA_FAILED = "prometheus_remote_storage_metadata_failed_total";

  private static final Duration DEADLINE = Duration.ofSeconds(60);
  private static final String SERVICE_ID = PrometheusProcess.SERVICE_ID_LABEL;
  private static final String FROM_SENDER = "{job=\"" + PrometheusProcess.SENDER_JOB + "\"}";
  private static final Set<String> TENANTS = Set.of("tenant-0", "tenant-1", "tenant-2");

  /**
   * Prometheus → relay → recording downstream: every forwarded request is a well-formed PRW 1.0
   * request for one of the three tenants, holds only that tenant's series with their labels still
   * sorted and their samples from this run, every series the sender scraped arrives under the
   * tenant its metric name hashes to, and the sender saw every send accepted.
   */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void senderSeriesReachTheDownstreamSplitByServiceId() throws Exception {
    long runStartMillis = System.currentTimeMillis();
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    try (RelayFixture relay = new RelayFixture();
        PrometheusProcess sender = PrometheusProcess.startSender(relay.uri("/api/v1/write"))) {
      ScriptedDownstream downstream = relay.downstream;

      boolean allTenants =
          Await.within(
              remaining(deadline), () -> downstream.byTenant().keySet().containsAll(TENANTS));
      assertTrue(
          allTenants,
          () ->
              "downstream saw tenants "
                  + new TreeSet<>(downstream.byTenant().keySet())
                  + " within "
                  + DEADLINE
                  + "\n"
                  + sender.logTail());

      List<Map<String, String>> scraped = labelSets(sender.query(FROM_SENDER));
      assertTrue(scraped.size() > 3, () -> "sender has too few series: " + scraped);
      ForwardedSeries forwarded = new ForwardedSeries();
      boolean complete =
          Await.within(
              remaining(deadline),
              () -> forwarded.addAll(downstream.received()).missing(scraped).isEmpty());
      assertTrue(
          complete,
          () ->
              "series scraped by the sender but never forwarded with the expected service_id: "
                  + forwarded.missing(scraped)
                  + "\n"
                  + sender.logTail());

      assertSenderAccepted(sender, System.currentTimeMillis(), deadline);

      List<Received> received = downstream.received();
      long runEndMillis = System.currentTimeMillis();
      for (Received request : received) {
        assertForwardedRequest(request, runStartMillis, runEndMillis);
      }
    }
  }

  /**
   * Prometheus → relay → Prometheus receiver: the receiver stores the sender's series under all
   * three {@code service_id} values, each metric name under the value it hashes to, and {@code up}
   * with value 1; the sender saw every send accepted, and the relay sent nothing anywhere else.
   */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void senderSeriesReachAPrometheusReceiverThroughTheRelay() throws Exception {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    String upTenant = PrometheusProcess.expectedServiceId("up");
    String upQuery =
        "up{job=\"" + PrometheusProcess.SENDER_JOB + "\", service_id=\"" + upTenant + "\"}";
    String perServiceId = "count by (service_id) (" + FROM_SENDER + ")";
    try (PrometheusProcess receiver =
            PrometheusProcess.start(
                PrometheusProcess.receiverConfig(), PrometheusProcess.REMOTE_WRITE_RECEIVER_FLAG);
        RelayFixture relay =
            new RelayFixture(Map.of("relay.downstream.url", receiver.remoteWriteUrl()));
        PrometheusProcess sender = PrometheusProcess.startSender(relay.uri("/api/v1/write"))) {
      boolean arrived =
          Await.within(
              remaining(deadline),
              () ->
                  serviceIds(receiver.query(perServiceId)).equals(TENANTS)
                      && !receiver.query(upQuery).isEmpty());
      assertTrue(
          arrived,
          () ->
              "receiver saw service_ids "
                  + serviceIds(receiver.query(perServiceId))
                  + " within "
                  + DEADLINE
                  + "\n"
                  + sender.logTail()
                  + receiver.logTail());

      List<Series> up = receiver.query("up" + FROM_SENDER);
      assertEquals(1, up.size(), () -> "up series in the receiver: " + up);
      assertEquals(upTenant, up.get(0).label(SERVICE_ID), () -> "service_id of up: " + up);
      assertEquals(1.0, up.get(0).asDouble(), 0.0, "value of " + upQuery);

      assertEquals(
          List.of(),
          receiver.query("count({job=\"" + PrometheusProcess.SENDER_JOB + "\", service_id=\"\"})"),
          "every stored series carries service_id");
      receiver.assertServiceIdPerMetricName();

      assertSenderAccepted(sender, System.currentTimeMillis(), deadline);
      assertEquals(
          List.of(),
          relay.downstream.received(),
          "everything went to the configured receiver, nothing to the fixture's default downstream");
    }
  }

  /**
   * Waits until the sender has scraped its own remote-storage counters at or after {@code
   * sinceMillis}, so that they cover every send completed by then, and asserts that it sent samples
   * and recorded no retried or failed samples and no failed metadata.
   */
  private static void assertSenderAccepted(
      PrometheusProcess sender, long sinceMillis, long deadline) throws InterruptedException {
    String sent = SAMPLES_SENT + FROM_SENDER;
    boolean scraped =
        Await.within(
            remaining(deadline),
            () -> Math.round(senderValue(sender, "timestamp(" + sent + ")") * 1000) >= sinceMillis);
    assertTrue(
        scraped,
        () -> "sender did not scrape " + sent + " after " + sinceMillis + "\n" + sender.logTail());
    assertTrue(senderValue(sender, sent) > 0, () -> sent + " of the sender\n" + sender.logTail());
    for (String counter : List.of(SAMPLES_RETRIED, SAMPLES_FAILED, METADATA_FAILED)) {
      double value = senderValue(sender, counter + FROM_SENDER);
      assertEquals(
          0.0, value, 0.0, () -> "sender's " + counter + " is " + value + "\n" + sender.logTail());
    }
  }

  /**
   * The value of a query on the sender that yields at most one series, such as one of its own
   * remote-storage counters (it has exactly one remote-write queue), or -1 while there is none.
   */
  private static double senderValue(PrometheusProcess sender, String promql) {
    List<Series> result = sender.query(promql);
    if (result.isEmpty()) {
      return -1;
    }
    assertEquals(1, result.size(), () -> promql + ": " + result);
    return result.get(0).asDouble();
  }

  /**
   * Asserts everything that must hold for one request the relay forwarded: PRW 1.0 headers, a
   * tenant header naming one of the three tenants, a body that decodes without unknown fields, and
   * in it only series of that tenant, each with sorted labels, a single {@code service_id}, at
   * least one sample, and sample timestamps between {@code fromMillis} and {@code toMillis}.
   */
  private static void assertForwardedRequest(Received request, long fromMillis, long toMillis) {
    String tenant = request.tenant();
    assertTrue(TENANTS.contains(tenant), () -> "X-Scope-OrgID: " + tenant);
    ForwardedRequests.assertPrw1Push(request);

    WriteRequest body = decode(request);
    assertTrue(body.getUnknownFields().asMap().isEmpty(), () -> "unknown fields in " + body);
    assertTrue(body.getTimeseriesCount() > 0, () -> "request for " + tenant + " without series");
    for (TimeSeries series : body.getTimeseriesList()) {
      Map<String, String> labels = labelMap(series);
      String where = "series " + labels + " in a request for " + tenant;
      assertTrue(series.getUnknownFields().asMap().isEmpty(), () -> "unknown fields in " + where);
      assertEquals(tenant, labels.get(SERVICE_ID), () -> "service_id of " + where);
      assertEquals(
          PrometheusProcess.expectedServiceId(labels.get("__name__")),
          tenant,
          () -> "tenant of the metric name of " + where);
      List<Label> list = series.getLabelsList();
      for (int i = 1; i < list.size(); i++) {
        String previous = list.get(i - 1).getName();
        String current = list.get(i).getName();
        assertTrue(
            previous.compareTo(current) < 0,
            () -> "labels not strictly sorted (" + previous + ", " + current + ") in " + where);
      }
      assertFalse(series.getSamplesList().isEmpty(), () -> "no samples in " + where);
      for (Sample sample : series.getSamplesList()) {
        long timestamp = sample.getTimestamp();
        assertTrue(
            timestamp >= fromMillis && timestamp <= toMillis,
            () ->
                "timestamp "
                    + timestamp
                    + " outside the run ["
                    + fromMillis
                    + ", "
                    + toMillis
                    + "] in "
                    + where);
      }
    }
  }

  /** The label sets of a query result, e.g. every series the sender has scraped. */
  private static List<Map<String, String>> labelSets(List<Series> result) {
    List<Map<String, String>> sets = new ArrayList<>(result.size());
    for (Series series : result) {
      sets.add(series.labels());
    }
    return sets;
  }

  /** The labels of a forwarded series by name, failing on a repeated name. */
  private static Map<String, String> labelMap(TimeSeries series) {
    Map<String, String> labels = new LinkedHashMap<>();
    for (Label label : series.getLabelsList()) {
      if (labels.put(label.getName(), label.getValue()) != null) {
        fail("label " + label.getName() + " repeated in " + series.getLabelsList());
      }
    }
    return labels;
  }

  /** The forwarded body as a PRW 1.0 request; an assertion error when it is not one. */
  static WriteRequest decode(Received request) {
    try {
      return WriteRequest.parseFrom(request.body());
    } catch (InvalidProtocolBufferException e) {
      throw new AssertionError(
          "forwarded body for " + request.tenant() + " is not a WriteRequest", e);
    }
  }

  private static Set<String> serviceIds(List<Series> result) {
    Set<String> ids = new TreeSet<>();
    for (Series series : result) {
      ids.add(Objects.toString(series.label(SERVICE_ID), "(none)"));
    }
    return ids;
  }

  private static Duration remaining(long deadlineNanos) {
    return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
  }

  /**
   * The label sets of every series forwarded so far, decoded incrementally from the recorded
   * requests.
   */
  private static final class ForwardedSeries {
    private final Set<Map<String, String>> labelSets = new HashSet<>();
    private int decoded;

    /** Decodes the requests in {@code received} not seen before; returns this. */
    ForwardedSeries addAll(List<Received> received) {
      for (; decoded < received.size(); decoded++) {
        for (TimeSeries series : decode(received.get(decoded)).getTimeseriesList()) {
          labelSets.add(labelMap(series));
        }
      }
      return this;
    }

    /**
     * The scraped label sets that were not forwarded with {@code service_id} set to the tenant
     * their metric name hashes to.
     */
    List<Map<String, String>> missing(List<Map<String, String>> scraped) {
      List<Map<String, String>> missing = new ArrayList<>();
      for (Map<String, String> labels : scraped) {
        Map<String, String> expected = new HashMap<>(labels);
        expected.put(SERVICE_ID, PrometheusProcess.expectedServiceId(labels.get("__name__")));
        if (!labelSets.contains(expected)) {
          missing.add(labels);
        }
      }
      return missing;
    }
  }
}
