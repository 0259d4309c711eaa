package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.it.MiniJson;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A request refused 403 (its credential may write one tenant, it carries series of others) changes
 * nothing shared, through a whole relay: no other tenant's insight row (its active series, its
 * metric names), no tenant's row created, no metric family learned for another tenant (so that
 * tenant's metadata routing is as before), no per-tenant metric.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RefusedRequestTest {
  private static final String LIMITED =
      "Basic "
          + Base64.getEncoder().encodeToString("prom-a:secret".getBytes(StandardCharsets.UTF_8));

  private static TimeSeries series(String name, String tenant, int i) {
    return TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addLabels(Label.newBuilder().setName("i").setValue(Integer.toString(i)))
        .addLabels(Label.newBuilder().setName("service_id").setValue(tenant))
        .addSamples(Sample.newBuilder().setValue(1).setTimestamp(1_700_000_000_000L))
        .build();
  }

  private static MetricMetadata meta(String family) {
    return MetricMetadata.newBuilder()
        .setType(MetricMetadata.MetricType.GAUGE)
        .setMetricFamilyName(family)
        .setHelp("Help of " + family + ".")
        .build();
  }

  /** The family names of the metadata each tenant received in requests without series. */
  private static Map<String, List<String>> metadataByTenant(List<Received> received)
      throws Exception {
    Map<String, List<String>> out = new TreeMap<>();
    for (Received r : received) {
      WriteRequest w = WriteRequest.parseFrom(r.body());
      if (w.getTimeseriesCount() == 0) {
        for (MetricMetadata m : w.getMetadataList()) {
          out.computeIfAbsent(r.tenant(), t -> new ArrayList<>()).add(m.getMetricFamilyName());
        }
      }
    }
    return out;
  }

  @Test
  @SuppressWarnings("unchecked")
  void aCredentialForOneTenantCannotAlterAnotherTenantsInsightRowOrMetadataRouting()
      throws Exception {
    try (RelayFixture f =
        new RelayFixture(
            Map.of(
                "relay.server.basic-auth.username", "prom-a",
                "relay.server.basic-auth.password", "secret",
                "relay.server.basic-auth.tenants", "team-a",
                "relay.server.bearer-token", "fleet"))) {
      HttpResponse<String> victim =
          f.write(
              WriteRequest.newBuilder()
                  .addTimeseries(series("up", "team-b", 0))
                  .build()
                  .toByteArray(),
              "Authorization",
              "Bearer fleet");
      assertEquals(204, victim.statusCode(), victim::body);
      int delivered = f.downstream.received().size();

      WriteRequest.Builder attack = WriteRequest.newBuilder();
      for (int i = 0; i < 50; i++) {
        attack.addTimeseries(series("attack_metric", "team-a", i));
        attack.addTimeseries(series("attack_metric", "team-b", i));
        attack.addTimeseries(series("attack_metric", "team-c", i));
      }
      attack.addMetadata(meta("attack_metric"));
      for (int round = 0; round < 3; round++) {
        HttpResponse<String> refused =
            f.write(attack.build().toByteArray(), "Authorization", LIMITED);
        assertEquals(403, refused.statusCode(), refused::body);
        assertTrue(refused.body().contains("team-b"), refused::body);
      }
      assertEquals(delivered, f.downstream.received().size(), "nothing of it delivered");

      // The victim's metadata of the attacker's family goes where it went before: the default
      // tenant, as no tenant sent a series of it in an accepted request.
      HttpResponse<String> metadata =
          f.write(
              WriteRequest.newBuilder().addMetadata(meta("attack_metric")).build().toByteArray(),
              "Authorization",
              "Bearer fleet");
      assertEquals(204, metadata.statusCode(), metadata::body);
      assertEquals(
          Map.of("anonymous", List.of("attack_metric")), metadataByTenant(f.downstream.received()));

      HttpResponse<String> api = f.get("/api/v1/tenants");
      assertEquals(200, api.statusCode());
      List<Map<String, Object>> rows =
          (List<Map<String, Object>>)
              ((Map<String, Object>) MiniJson.parse(api.body())).get("tenants");
      Map<String, Map<String, Object>> byTenant = new TreeMap<>();
      for (Map<String, Object> row : rows) {
        byTenant.put((String) row.get("tenant"), row);
      }
      assertEquals(List.of("anonymous", "team-b"), List.copyOf(byTenant.keySet()), api.body());
      Map<String, Object> b = byTenant.get("team-b");
      assertEquals(1.0, b.get("active_series_estimate"), api.body());
      List<Map<String, Object>> names = (List<Map<String, Object>>) b.get("top_metrics");
      // Names are sampled (one series in 8): of 50 attacker series some would show.
      assertTrue(
          names.stream().allMatch(n -> n.get("name").equals("up")),
          "only the victim's own metric names: " + api.body());

      String scrape = f.relay.metrics().scrape();
      assertFalse(scrape.contains("tenant=\"team-c\""), scrape);
      assertFalse(scrape.contains("tenant=\"team-a\""), scrape);
      assertTrue(scrape.contains("relay_metadata_family_tenants 1.0"), scrape);
    }
  }
}
