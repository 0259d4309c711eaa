package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.MeterRegistry;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.RawProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@code relay.tenant.allowed} end to end: one request carrying 200 tenants nobody configured makes
 * no lane and no downstream request of its own for any of them; their series go where series
 * without a tenant go, counted by reason, and series without the label are counted however few.
 */
class AllowedTenantsRelayTest {
  private static byte[] series(String... labels) {
    List<byte[]> fields = new ArrayList<>();
    fields.add(RawProto.label("__name__", "up"));
    for (int i = 0; i < labels.length; i += 2) {
      fields.add(RawProto.label(labels[i], labels[i + 1]));
    }
    fields.add(RawProto.sample(1, 1_700_000_000_000L));
    return RawProto.series(fields.toArray(new byte[0][]));
  }

  /** One request: team-a's series, 200 series of random tenants, 3 series without the label. */
  private static byte[] request() {
    List<byte[]> all = new ArrayList<>();
    all.add(series("service_id", "team-a"));
    Random random = new Random(7);
    for (int i = 0; i < 200; i++) {
      all.add(series("service_id", "svc-" + Long.toHexString(random.nextLong()), "i", "" + i));
    }
    for (int i = 0; i < 3; i++) {
      all.add(series("job", "node", "i", "" + i));
    }
    return RawProto.cat(all.toArray(new byte[0][]));
  }

  private static double counter(MeterRegistry r, String name, String... tags) {
    return r.get(name).tags(tags).counter().count();
  }

  @Test
  void tenantsNotAllowedGoToTheDefaultTenantAndMakeNoLane() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.tenant.allowed", "team-a,team-b"))) {
      assertEquals(204, f.write(request()).statusCode());
      Map<String, Long> series = new TreeMap<>();
      f.downstream.counts().forEach((t, c) -> series.put(t, c.series()));
      assertEquals(Map.of("anonymous", 203L, "team-a", 1L), series);
      MeterRegistry r = f.relay.metrics().registry();
      assertEquals(
          2, r.get("relay.lanes").gauge().value(), "team-a's lane and the default tenant's");
      assertEquals(200, counter(r, "relay.series.defaulted", "reason", "not_allowed"));
      assertEquals(3, counter(r, "relay.series.defaulted", "reason", "missing"));
      assertEquals(3, counter(r, "relay.series.without.tenant.label"));
    }
  }

  @Test
  void underDropTheyAreDroppedAndCounted() throws Exception {
    try (RelayFixture f =
        new RelayFixture(
            Map.of("relay.tenant.allowed", "team-a", "relay.tenant.missing", "drop"))) {
      assertEquals(204, f.write(request()).statusCode());
      Map<String, Long> series = new TreeMap<>();
      f.downstream.counts().forEach((t, c) -> series.put(t, c.series()));
      assertEquals(Map.of("team-a", 1L), series);
      MeterRegistry r = f.relay.metrics().registry();
      assertEquals(200, counter(r, "relay.series.dropped", "reason", "not_allowed"));
      assertEquals(3, counter(r, "relay.series.without.tenant.label"));
    }
  }

  @Test
  void underRejectTheRequestIsAnswered400NamingTheSeries() throws Exception {
    try (RelayFixture f =
        new RelayFixture(
            Map.of("relay.tenant.allowed", "team-a", "relay.tenant.missing", "reject"))) {
      var answer = f.write(request());
      assertEquals(400, answer.statusCode());
      assertEquals(
          true,
          answer
              .body()
              .contains(
                  "timeseries[1]: the value of tenant label service_id is not one of the allowed"
                      + " tenants (not_allowed)"),
          answer.body());
      assertEquals(Map.of(), f.downstream.counts());
    }
  }
}
