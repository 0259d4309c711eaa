package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
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
 * A PRW 1.0 request that carries only metadata, as Prometheus 2.x sends it, through a whole relay:
 * each entry reaches exactly the tenants that sent series of its family (else the default tenant),
 * the sender is answered from those deliveries, and what was routed and dropped is counted on
 * {@code /metrics}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetadataRoutingRelayTest {
  private static TimeSeries series(String name, String tenant) {
    TimeSeries.Builder b =
        TimeSeries.newBuilder().addLabels(Label.newBuilder().setName("__name__").setValue(name));
    if (tenant != null) {
      b.addLabels(Label.newBuilder().setName("service_id").setValue(tenant));
    }
    return b.addSamples(Sample.newBuilder().setValue(1).setTimestamp(1_700_000_000_000L)).build();
  }

  private static MetricMetadata meta(String family, MetricMetadata.MetricType type) {
    return MetricMetadata.newBuilder()
        .setType(type)
        .setMetricFamilyName(family)
        .setHelp("Help of " + family + ".")
        .build();
  }

  private static byte[] seriesRequest(TimeSeries... series) {
    return WriteRequest.newBuilder().addAllTimeseries(List.of(series)).build().toByteArray();
  }

  private static byte[] metadataRequest(MetricMetadata... metadata) {
    return WriteRequest.newBuilder().addAllMetadata(List.of(metadata)).build().toByteArray();
  }

  /** The family names of the metadata each tenant received, in requests without series. */
  private static Map<String, List<String>> metadataByTenant(List<Received> received)
      throws Exception {
    Map<String, List<String>> out = new TreeMap<>();
    for (Received r : received) {
      WriteRequest w = WriteRequest.parseFrom(r.body());
      if (w.getMetadataCount() == 0) {
        continue;
      }
      assertEquals(0, w.getTimeseriesCount(), () -> "series beside metadata for " + r.tenant());
      for (MetricMetadata m : w.getMetadataList()) {
        out.computeIfAbsent(r.tenant(), t -> new ArrayList<>()).add(m.getMetricFamilyName());
      }
    }
    return out;
  }

  private static double metric(RelayFixture f, String series) {
    return Scrape.value(f.relay.metrics().scrape(), series);
  }

  @Test
  void eachEntryReachesExactlyTheTenantsThatSentItsFamily() throws Exception {
    try (RelayFixture f = new RelayFixture()) {
      HttpResponse<String> learned =
          f.write(
              seriesRequest(
                  series("http_requests_total", "team-a"),
                  series("latency_seconds_bucket", "team-a"),
                  series("latency_seconds_sum", "team-b"),
                  series("latency_seconds_count", "team-b"),
                  series("queue_depth", "team-b")));
      assertEquals(204, learned.statusCode(), learned::body);
      int seriesRequests = f.downstream.received().size();

      HttpResponse<String> answer =
          f.write(
              metadataRequest(
                  meta("http_requests_total", MetricMetadata.MetricType.COUNTER),
                  meta("latency_seconds", MetricMetadata.MetricType.HISTOGRAM),
                  meta("queue_depth", MetricMetadata.MetricType.GAUGE),
                  meta("never_sent", MetricMetadata.MetricType.GAUGE)));
      assertEquals(204, answer.statusCode(), answer::body);

      List<Received> received = f.downstream.received();
      assertEquals(seriesRequests + 3, received.size(), "one request per tenant of the metadata");
      assertEquals(
          Map.of(
              "team-a", List.of("http_requests_total", "latency_seconds"),
              "team-b", List.of("latency_seconds", "queue_depth"),
              "anonymous", List.of("never_sent")),
          metadataByTenant(received));
      for (Received r : received) {
        assertEquals("0.1.0", r.header("X-Prometheus-Remote-Write-Version"));
      }
      assertEquals(3, metric(f, "relay_metadata_routed_total{route=\"family\"}"));
      assertEquals(1, metric(f, "relay_metadata_routed_total{route=\"default\"}"));
      assertEquals(2, metric(f, "relay_tenant_metadata_in_total{tenant=\"team-a\"}"));
      assertEquals(2, metric(f, "relay_tenant_metadata_in_total{tenant=\"team-b\"}"));
      assertEquals(1, metric(f, "relay_tenant_metadata_in_total{tenant=\"anonymous\"}"));
      assertEquals(4, metric(f, "relay_metadata_family_tenants"));
    }
  }

  @Test
  void theSenderIsAnsweredFromTheDeliveryOfTheMetadataBatches() throws Exception {
    try (RelayFixture f = new RelayFixture()) {
      f.write(seriesRequest(series("up", "team-a"), series("up", "team-b")));
      f.downstream.script(
          "team-b", Reply.status(400, "err-mimir-metric-metadata-missing-metric-name"));
      HttpResponse<String> answer =
          f.write(metadataRequest(meta("up", MetricMetadata.MetricType.GAUGE)));
      assertEquals(400, answer.statusCode(), answer::body);
      assertTrue(answer.body().contains("team-b"), answer::body);
      assertEquals(
          List.of("up"), metadataByTenant(f.downstream.received()).get("team-a"), "team-a's copy");
    }
  }

  @Test
  void underMissingDropAnEntryOfAnUnknownFamilyIsDroppedAndCounted() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.tenant.missing", "drop"))) {
      f.write(seriesRequest(series("known", "team-a"), series("orphan", null)));
      int before = f.downstream.received().size();
      HttpResponse<String> answer =
          f.write(
              metadataRequest(
                  meta("orphan", MetricMetadata.MetricType.GAUGE),
                  meta("unknown", MetricMetadata.MetricType.GAUGE)));
      assertEquals(204, answer.statusCode(), answer::body);
      assertEquals(before, f.downstream.received().size(), "nothing sent");
      assertEquals(2, metric(f, "relay_metadata_dropped_total{reason=\"unknown_family\"}"));
      HttpResponse<String> known =
          f.write(metadataRequest(meta("known", MetricMetadata.MetricType.GAUGE)));
      assertEquals(204, known.statusCode(), known::body);
      assertEquals(Map.of("team-a", List.of("known")), metadataByTenant(f.downstream.received()));
    }
  }

  @Test
  void eachCredentialsMetadataGoesOnlyToItsOwnTenantsAndNeverToAForbiddenOne() throws Exception {
    try (RelayFixture f =
        new RelayFixture(
            Map.of(
                "relay.server.basic-auth.username", "prom-a",
                "relay.server.basic-auth.password", "secret",
                "relay.server.basic-auth.tenants", "team-a",
                "relay.server.bearer-token", "fleet"))) {
      String basic =
          "Basic "
              + Base64.getEncoder()
                  .encodeToString("prom-a:secret".getBytes(StandardCharsets.UTF_8));
      // Both from 127.0.0.1: the credentials make them two senders.
      HttpResponse<String> fleet =
          f.write(
              seriesRequest(series("shared", "team-a"), series("shared", "team-b")),
              "Authorization",
              "Bearer fleet");
      assertEquals(204, fleet.statusCode(), fleet::body);
      HttpResponse<String> own =
          f.write(seriesRequest(series("shared", "team-a")), "Authorization", basic);
      assertEquals(204, own.statusCode(), own::body);

      HttpResponse<String> answer =
          f.write(
              metadataRequest(
                  meta("shared", MetricMetadata.MetricType.GAUGE),
                  meta("only_fleet_knows", MetricMetadata.MetricType.GAUGE)),
              "Authorization",
              basic);
      assertEquals(204, answer.statusCode(), answer::body);
      // "shared" to prom-a's own team-a only, not to the fleet's team-b; the unknown family to the
      // default tenant, which prom-a may not write: dropped, counted.
      assertEquals(
          Map.of("team-a", List.of("shared")),
          metadataByTenant(f.downstream.received()),
          "prom-a's metadata reached only its own tenant");
      assertEquals(1, metric(f, "relay_metadata_dropped_total{reason=\"forbidden_tenant\"}"));
    }
  }
}
