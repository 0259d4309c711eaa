package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testkit.ScriptedDownstream;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The per-tenant limits end to end, against a recording downstream: a tenant exploding past its
 * series limit is cut to its limit while its active series and every other tenant flow, exactly;
 * its sender is answered 400 naming it; a tenant over its samples rate is answered as a downstream
 * 429 of that tenant alone under {@code relay.delivery.throttled.policy}.
 */
class TenantLimitsRelayTest {
  @TempDir Path dir;

  private static TimeSeries series(String tenant, String name, int pod) {
    return TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addLabels(Label.newBuilder().setName("pod").setValue("p-" + pod))
        .addLabels(Label.newBuilder().setName("service_id").setValue(tenant))
        .addSamples(Sample.newBuilder().setValue(pod).setTimestamp(1_700_000_000_000L))
        .build();
  }

  /** Team-x's pods {@code [from, to)} of metric {@code name}, and team-a's 50 series. */
  private static byte[] request(String name, int from, int to) {
    WriteRequest.Builder w = WriteRequest.newBuilder();
    for (int i = 0; i < 50; i++) {
      w.addTimeseries(series("team-a", "up", i));
    }
    for (int i = from; i < to; i++) {
      w.addTimeseries(series("team-x", name, i));
    }
    return w.build().toByteArray();
  }

  /** Every series the downstream accepted, by tenant, as {@code name/pod}, in order. */
  private static Map<String, List<String>> delivered(ScriptedDownstream d) throws Exception {
    Map<String, List<String>> out = new TreeMap<>();
    for (ScriptedDownstream.Received r : d.received()) {
      for (TimeSeries t : WriteRequest.parseFrom(r.body()).getTimeseriesList()) {
        out.computeIfAbsent(r.tenant(), x -> new ArrayList<>())
            .add(t.getLabels(0).getValue() + "/" + t.getLabels(1).getValue());
      }
    }
    return out;
  }

  private static List<String> pods(String name, int from, int to) {
    List<String> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(name + "/p-" + i);
    }
    return out;
  }

  /** The series of team-x an answer says its limit dropped. */
  private static int limitedIn(String body) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(
                "^the request was delivered except series over their tenant's series limit at the"
                    + " relay, which were dropped \\(relay.limits.max-series-per-tenant\\); do"
                    + " not send it again:\n  tenant team-x \\((\\d+) series new to the tenant"
                    + " beyond its limit of 100 active series\\)\n$")
            .matcher(body);
    assertTrue(m.matches(), body);
    return Integer.parseInt(m.group(1));
  }

  private static double counter(MeterRegistry r, String name, String... tags) {
    return r.get(name).tags(tags).counter().count();
  }

  @Test
  void anExplodingTenantIsCutAtItsLimitWhileItsActiveSeriesAndTheOthersFlow() throws Exception {
    Path overrides = dir.resolve("overrides");
    Files.writeString(overrides, "team-x.max-series-per-tenant = 100\n");
    try (RelayFixture f =
        new RelayFixture(Map.of("relay.limits.overrides-file", overrides.toString()))) {
      assertEquals(204, f.write(request("up", 0, 80)).statusCode());

      // The explosion: 500 new series of one metric on top of the 80 active ones.
      HttpResponse<String> cut = f.write(request("http_requests_total", 0, 500));
      assertEquals(400, cut.statusCode(), cut.body());
      int limited = limitedIn(cut.body());
      // 480 over the limit, less the few a filter's false positive lets pass (docs/limits.md).
      assertTrue(limited > 470 && limited <= 480, cut.body());

      // The active 80 still flow, and so do the explosion's series the limit admitted.
      assertEquals(204, f.write(request("up", 0, 80)).statusCode());
      HttpResponse<String> again = f.write(request("http_requests_total", 0, 30));
      int limitedAgain = again.statusCode() == 204 ? 0 : limitedIn(again.body());
      assertTrue(limitedAgain <= 10, again.body());

      List<String> teamA = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        teamA.addAll(pods("up", 0, 50));
      }
      Map<String, List<String>> delivered = delivered(f.downstream);
      assertEquals(teamA, delivered.get("team-a"), "team-a: every series, every time");
      List<String> teamX = delivered.get("team-x");
      assertEquals(80 + 500 - limited + 80 + 30 - limitedAgain, teamX.size());
      assertEquals(pods("up", 0, 80), teamX.subList(0, 80));
      assertEquals(pods("http_requests_total", 0, 20), teamX.subList(80, 100), "the first 20 new");
      int third = 80 + 500 - limited;
      assertEquals(pods("up", 0, 80), teamX.subList(third, third + 80), "active: never dropped");
      assertEquals(
          pods("http_requests_total", 0, 20),
          teamX.subList(third + 80, third + 100),
          "admitted in the explosion, active since");

      MeterRegistry r = f.relay.metrics().registry();
      assertEquals(
          limited + limitedAgain,
          counter(r, "relay.tenant.series.limited", "tenant", "team-x", "reason", "max_series"));
      assertEquals(1, r.get("relay.limits.config.last.reload.successful").gauge().value());
      String page = f.get("/api/v1/tenants").body();
      assertTrue(
          page.contains(
              "\"limits\":{\"max_series\":100,\"active_series\":100,\"samples_per_second\":0,"
                  + "\"samples_burst\":null,\"limited_metrics\":[\"http_requests_total\"]}"),
          page);
      assertTrue(page.contains("\"tenant\":\"team-a\""), page);
      String html = f.get("/tenants").body();
      assertTrue(html.contains("<th class=\"num\">Limits</th>"), html);
      assertTrue(html.contains("100 / 100 series (100 %)"), html);
      assertTrue(html.contains("dropped: http_requests_total"), html);
    }
  }

  @Test
  void aTenantOverItsSamplesRateIsAnswered429ThenDroppedAndTheOthersAreDeliveredOnce()
      throws Exception {
    Path overrides = dir.resolve("overrides");
    Files.writeString(overrides, "team-x.samples-per-second = 1\nteam-x.samples-burst = 100\n");
    try (RelayFixture f =
        new RelayFixture(Map.of("relay.limits.overrides-file", overrides.toString()))) {
      byte[] body = request("up", 0, 150); // 150 samples of team-x: more than its burst
      HttpResponse<String> first = f.write(body);
      assertEquals(429, first.statusCode(), first.body());
      assertTrue(
          first.body().contains("over the tenant's samples-per-second limit at the relay"),
          first.body());
      assertEquals(List.of(), first.headers().allValues("Retry-After"), "team-a was delivered");
      HttpResponse<String> retry = f.write(body);
      assertEquals(400, retry.statusCode(), retry.body());
      assertTrue(retry.body().contains("tenant team-x (150 series"), retry.body());

      assertEquals(Map.of("team-a", pods("up", 0, 50)), delivered(f.downstream));
      MeterRegistry r = f.relay.metrics().registry();
      assertEquals(
          300,
          counter(r, "relay.tenant.series.limited", "tenant", "team-x", "reason", "samples_rate"));
      assertEquals(
          150,
          counter(r, "relay.tenant.series.dropped", "tenant", "team-x", "reason", "throttled"));

      // Within its rate and burst, team-x's batch goes through.
      assertEquals(204, f.write(request("up", 0, 60)).statusCode());
      assertEquals(60, delivered(f.downstream).get("team-x").size());
    }
  }
}
