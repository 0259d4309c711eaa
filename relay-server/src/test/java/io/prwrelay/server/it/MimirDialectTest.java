package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.server.testing.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.xerial.snappy.Snappy;

/**
 * What a real Grafana Mimir answers to the requests the relay sends it, one behaviour per test and
 * no relay in between: the facts the relay's handling of Mimir rests on (docs/delivery.md, "Cortex
 * and Mimir"). Each test starts its own Mimir ({@link MimirProcess}).
 */
@ExtendWith(MimirProcess.Required.class)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class MimirDialectTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String V2_TYPE =
      "application/x-protobuf;proto=io.prometheus.write.v2.Request";

  @Test
  void answers200AndKeepsEachTenantsSeriesApart() throws Exception {
    try (MimirProcess mimir = MimirProcess.start()) {
      long now = System.currentTimeMillis();
      HttpResponse<String> a = push(mimir, "tenant-a", v1(series("up", "a", 1, now)));
      HttpResponse<String> b = push(mimir, "tenant-b", v1(series("up", "b", 2, now)));
      assertEquals(200, a.statusCode(), a.body());
      assertEquals(200, b.statusCode(), b.body());
      assertEquals("", a.body());
      assertEquals(List.of("a"), serviceIds(mimir, "tenant-a", "up"));
      assertEquals(List.of("b"), serviceIds(mimir, "tenant-b", "up"));
    }
  }

  /**
   * Over its {@code ingestion_rate} a tenant's push is answered 429 with {@code Retry-After} of 6 s
   * × 2^(Retry-Attempt − 1), ±50 %, never below 6 s; the other tenants are not touched.
   */
  @Test
  void answers429WithARetryAfterThatGrowsWithRetryAttempt() throws Exception {
    Map<String, String> slow = Map.of("ingestion_rate", "1", "ingestion_burst_size", "1");
    try (MimirProcess mimir = MimirProcess.start(Map.of("throttled", slow))) {
      long now = System.currentTimeMillis();
      byte[] two = v1(series("up", "x", 1, now), series("other", "x", 1, now));
      HttpResponse<String> first = push(mimir, "throttled", two);
      HttpResponse<String> third = push(mimir, "throttled", two, "Retry-Attempt", "3");
      HttpResponse<String> healthy = push(mimir, "healthy", two);

      assertEquals(429, first.statusCode(), first.body());
      assertTrue(first.body().contains("err-mimir-tenant-max-ingestion-rate"), first.body());
      long retryAfter = Long.parseLong(first.headers().firstValue("Retry-After").orElseThrow());
      assertTrue(retryAfter >= 6 && retryAfter <= 9, "Retry-After " + retryAfter);
      assertEquals(429, third.statusCode(), third.body());
      long third3 = Long.parseLong(third.headers().firstValue("Retry-After").orElseThrow());
      assertTrue(third3 >= 12 && third3 <= 36, "Retry-After at attempt 3: " + third3);
      assertEquals(200, healthy.statusCode(), healthy.body());
    }
  }

  /**
   * A push that would take a tenant over {@code max_global_series_per_user} is answered 400, and
   * the series within the limit are stored: a partial write, not a retriable failure.
   */
  @Test
  void answers400OverTheSeriesLimitAndStoresTheSeriesWithinIt() throws Exception {
    Map<String, String> three = Map.of("max_global_series_per_user", "3");
    try (MimirProcess mimir = MimirProcess.start(Map.of("small", three))) {
      long now = System.currentTimeMillis();
      TimeSeries[] five = new TimeSeries[5];
      for (int i = 0; i < five.length; i++) {
        five[i] = series("m" + i, "s", i, now);
      }
      HttpResponse<String> r = push(mimir, "small", v1(five));

      assertEquals(400, r.statusCode(), r.body());
      assertTrue(r.body().contains("series limit"), r.body());
      assertTrue(r.headers().firstValue("Retry-After").isEmpty(), "no Retry-After on 400");
      assertEquals(
          "3", mimir.query("small", "count({service_id=\"s\"})").get(0).value(), "series stored");
    }
  }

  /**
   * PRW 2.0 is taken (the {@code proto=} parameter) and answered 200, not 204, with the written
   * counts.
   */
  @Test
  void takesRemoteWrite2AndAnswersWhatItWrote() throws Exception {
    try (MimirProcess mimir = MimirProcess.start()) {
      long now = System.currentTimeMillis();
      Request request =
          Request.newBuilder()
              .addAllSymbols(List.of("", "__name__", "up", "service_id", "v2"))
              .addTimeseries(
                  io.prwrelay.oracle.v2.TimeSeries.newBuilder()
                      .addAllLabelsRefs(List.of(1, 2, 3, 4))
                      .addSamples(
                          io.prwrelay.oracle.v2.Sample.newBuilder()
                              .setValue(1)
                              .setTimestamp(now - 1000))
                      .addSamples(
                          io.prwrelay.oracle.v2.Sample.newBuilder().setValue(2).setTimestamp(now)))
              .build();
      HttpResponse<String> r = post(mimir, "tenant-v2", request.toByteArray(), V2_TYPE, "2.0.0");

      assertEquals(200, r.statusCode(), r.body());
      assertEquals("2", header(r, "X-Prometheus-Remote-Write-Samples-Written"));
      assertEquals("0", header(r, "X-Prometheus-Remote-Write-Histograms-Written"));
      assertEquals("0", header(r, "X-Prometheus-Remote-Write-Exemplars-Written"));
      assertEquals(List.of("v2"), serviceIds(mimir, "tenant-v2", "up"));
    }
  }

  /**
   * With HA deduplication, a push led by the elected replica is answered 200 and one led by the
   * other replica 202: dropped whole, a success as far as the sender is concerned.
   */
  @Test
  void answers202ToTheReplicaThatIsNotElected() throws Exception {
    try (MimirProcess mimir =
        MimirProcess.start(
            "-distributor.ha-tracker.enable=true",
            "-distributor.ha-tracker.enable-for-all-users=true",
            "-distributor.ha-tracker.store=inmemory")) {
      long now = System.currentTimeMillis();
      HttpResponse<String> elected = push(mimir, "ha", v1(replica("r1", 1, now)));
      HttpResponse<String> standby = push(mimir, "ha", v1(replica("r2", 2, now)));

      assertEquals(200, elected.statusCode(), elected.body());
      assertEquals(202, standby.statusCode(), standby.body());
      assertEquals("1", mimir.query("ha", "up{cluster=\"c\"}").get(0).value());
    }
  }

  private static TimeSeries replica(String replica, double value, long at) {
    return TimeSeries.newBuilder()
        .addLabels(label("__name__", "up"))
        .addLabels(label("__replica__", replica))
        .addLabels(label("cluster", "c"))
        .addSamples(Sample.newBuilder().setValue(value).setTimestamp(at))
        .build();
  }

  private static TimeSeries series(String name, String serviceId, double value, long at) {
    return TimeSeries.newBuilder()
        .addLabels(label("__name__", name))
        .addLabels(label("service_id", serviceId))
        .addSamples(Sample.newBuilder().setValue(value).setTimestamp(at))
        .build();
  }

  private static Label label(String name, String value) {
    return Label.newBuilder().setName(name).setValue(value).build();
  }

  private static byte[] v1(TimeSeries... series) {
    return WriteRequest.newBuilder().addAllTimeseries(List.of(series)).build().toByteArray();
  }

  private static List<String> serviceIds(MimirProcess mimir, String tenant, String metric)
      throws InterruptedException {
    List<String>[] found = new List[1];
    Await.until(
        metric + " of " + tenant + " queryable in Mimir",
        Duration.ofSeconds(10),
        () -> {
          found[0] = mimir.query(tenant, metric).stream().map(s -> s.label("service_id")).toList();
          return !found[0].isEmpty();
        });
    return found[0];
  }

  private static String header(HttpResponse<String> r, String name) {
    return r.headers().firstValue(name).orElse(null);
  }

  private static HttpResponse<String> push(
      MimirProcess mimir, String tenant, byte[] v1, String... headers) throws Exception {
    return post(mimir, tenant, v1, "application/x-protobuf", "0.1.0", headers);
  }

  private static HttpResponse<String> post(
      MimirProcess mimir,
      String tenant,
      byte[] body,
      String contentType,
      String version,
      String... headers)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(mimir.pushUrl().toString()))
            .timeout(Duration.ofSeconds(10))
            .header(MimirProcess.TENANT_HEADER, tenant)
            .header("Content-Type", contentType)
            .header("Content-Encoding", "snappy")
            .header("X-Prometheus-Remote-Write-Version", version);
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    b.POST(HttpRequest.BodyPublishers.ofByteArray(Snappy.compress(body)));
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
