package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.ScriptedDownstream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * The per-tenant limits' memory bound ({@code relay.limits.max-memory-bytes}) in a relay process
 * with the memory of a small container ({@link RelayProcess#SMALL_CONTAINER}): 400 tenants, each
 * exploding past its limit of 2,000 series with 3,000, need about 3.7 MiB of filters and state; the
 * bound is 1 MiB. The relay stays up and answers every request, its limits never take more than the
 * bound (what does not fit is refused and counted: those tenants go unlimited), and every series
 * sent is either delivered or named as limited in the answer to its request.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class LimitsMemoryProcessTest {
  private static final int TENANTS = 400;
  private static final int SERIES = 3_000;
  private static final int TENANTS_PER_REQUEST = 20;
  private static final int SERIES_PER_REQUEST = 500;
  private static final long BOUND = 1 << 20;

  @TempDir Path dir;

  private static byte[] request(int firstTenant, int firstSeries) {
    WriteRequest.Builder w = WriteRequest.newBuilder();
    for (int t = firstTenant; t < firstTenant + TENANTS_PER_REQUEST; t++) {
      for (int s = firstSeries; s < firstSeries + SERIES_PER_REQUEST; s++) {
        w.addTimeseries(
            TimeSeries.newBuilder()
                .addLabels(Label.newBuilder().setName("__name__").setValue("requests_total"))
                .addLabels(Label.newBuilder().setName("request_id").setValue("r-" + s))
                .addLabels(Label.newBuilder().setName("service_id").setValue("tenant-" + t))
                .addSamples(Sample.newBuilder().setValue(s).setTimestamp(1_700_000_000_000L)));
      }
    }
    return w.build().toByteArray();
  }

  @Test
  void limitsStayWithinTheirMemoryBoundAndEverySeriesIsAccountedFor() throws Exception {
    try (ScriptedDownstream down = new ScriptedDownstream();
        RelayProcess relay =
            RelayProcess.start(
                dir,
                Map.of(
                    "relay.downstream.url", down.url(),
                    "relay.server.io-threads", "2",
                    "relay.limits.max-series-per-tenant", "2000",
                    "relay.limits.max-memory-bytes", "1MiB"))) {
      relay.awaitListening(Duration.ofSeconds(60));
      URI base = URI.create("http://127.0.0.1:" + relay.address().getPort());
      HttpClient http = HttpClient.newHttpClient();
      int answered = 0;
      int partial = 0;
      long limitedInAnswers = 0;
      java.util.regex.Pattern named =
          java.util.regex.Pattern.compile(
              "\\n  tenant tenant-\\d+ \\((\\d+) series new to the tenant");
      for (int t = 0; t < TENANTS; t += TENANTS_PER_REQUEST) {
        for (int s = 0; s < SERIES; s += SERIES_PER_REQUEST) {
          HttpResponse<String> a =
              http.send(
                  HttpRequest.newBuilder(base.resolve("/api/v1/write"))
                      .header("Content-Encoding", "snappy")
                      .header("Content-Type", "application/x-protobuf")
                      .header("X-Prometheus-Remote-Write-Version", "0.1.0")
                      .POST(HttpRequest.BodyPublishers.ofByteArray(Snappy.compress(request(t, s))))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
          assertTrue(a.statusCode() == 204 || a.statusCode() == 400, a.statusCode() + a.body());
          answered++;
          partial += a.statusCode() == 400 ? 1 : 0;
          java.util.regex.Matcher m = named.matcher(a.body());
          while (m.find()) {
            limitedInAnswers += Long.parseLong(m.group(1));
          }
        }
      }
      assertTrue(relay.isAlive(), relay.log());
      String metrics =
          http.send(
                  HttpRequest.newBuilder(base.resolve("/metrics")).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      double memory = Scrape.sum(metrics, "relay_limits_memory_bytes", Map.of());
      double refused = Scrape.sumOr(metrics, "relay_limits_memory_refused_total", Map.of(), 0);
      double limited =
          Scrape.sum(metrics, "relay_tenant_series_limited_total", Map.of("reason", "max_series"));
      assertEquals((TENANTS / TENANTS_PER_REQUEST) * (SERIES / SERIES_PER_REQUEST), answered);
      assertTrue(memory > BOUND / 2 && memory <= BOUND, "limits' memory " + memory);
      assertTrue(refused > 0, "tenants beyond the bound were refused and counted");
      assertTrue(partial > 0 && limited > 0, "tenants within the bound were limited");
      // Every series sent was delivered or named as limited in its answer (the metric's tenant
      // label is bounded: tenants that fall out of the top 100 take their counts with them).
      assertEquals((long) TENANTS * SERIES, down.totalSeries() + limitedInAnswers);
      assertTrue(limited <= limitedInAnswers, limited + " counted, " + limitedInAnswers + " named");
    }
  }
}
