package io.prwrelay.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.prwrelay.core.route.TenantRules;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.RawProto;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The warning when most series of a minute carry none of the tenant labels. */
class TenantLabelWatchTest {
  private final TenantLabelWatch watch = new TenantLabelWatch();

  @Test
  void warnsNamingTheLabelsTheShareAndTheDefaultTenantWhenMostSeriesHaveNoTenantLabel() {
    for (int i = 0; i < 1200; i++) {
      watch.routed(100, 87);
    }
    TenantRules rules = TenantRules.builder().labels("service_id").build();
    assertEquals(
        "87% of 120000 series in the last minute had none of the tenant labels [service_id];"
            + " they went to the default tenant \"anonymous\". Check relay.tenant.labels against"
            + " the labels the senders attach",
        watch.check(rules));
    assertNull(watch.check(rules), "each interval starts from zero: nothing routed since");
  }

  @Test
  void staysQuietWhenHalfOrFewerSeriesLackTheLabel() {
    watch.routed(100, 50);
    assertNull(watch.check(TenantRules.builder().build()));
    assertNull(watch.check(TenantRules.builder().build()), "nothing routed");
  }

  @Test
  void saysDroppedUnderTheDropPolicy() {
    watch.routed(10, 10);
    String w =
        watch.check(
            TenantRules.builder()
                .labels("tenant", "team")
                .missing(TenantRules.MissingPolicy.DROP)
                .build());
    assertEquals(
        "100% of 10 series in the last minute had none of the tenant labels [tenant, team];"
            + " they were dropped (relay.tenant.missing=drop). Check relay.tenant.labels against"
            + " the labels the senders attach",
        w);
  }

  @Test
  void theRelayCountsSeriesWithoutTheConfiguredLabelAsTheyAreRouted() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.tenant.labels", "serviceid"))) {
      byte[] request =
          RawProto.cat(
              RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(1, 1)),
              RawProto.series(RawProto.label("service_id", "b"), RawProto.sample(1, 1)),
              RawProto.series(RawProto.label("serviceid", "c"), RawProto.sample(1, 1)));
      for (int i = 0; i < 4; i++) {
        assertEquals(204, f.write(request).statusCode());
      }
      TenantRules rules = TenantRules.builder().labels("serviceid").build();
      assertEquals(
          "66% of 12 series in the last minute had none of the tenant labels [serviceid]; they went"
              + " to the default tenant \"anonymous\". Check relay.tenant.labels against the"
              + " labels the senders attach",
          f.relay.metrics().tenantLabels().check(rules));
    }
  }
}
