package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code relay.tenant.allowed} seen from outside, against a real Grafana Mimir ({@link
 * MimirProcess}): one request carrying 200 random {@code service_id} values and the three allowed
 * tenants makes no Mimir tenant and no relay lane beyond the three and the default tenant, which
 * receives the 200 series.
 */
@ExtendWith(MimirProcess.Required.class)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class MimirAllowedTenantsTest {
  private static final Pattern USER = Pattern.compile("user=\"([^\"]*)\"");

  /** The tenants Mimir's distributor received samples for. */
  private static Set<String> mimirTenants(MimirProcess mimir) {
    Set<String> users = new TreeSet<>();
    for (String line : mimir.metricLines("cortex_distributor_received_samples_total")) {
      Matcher m = USER.matcher(line);
      if (m.find()) {
        users.add(m.group(1));
      }
    }
    return users;
  }

  @Test
  void twoHundredRandomTenantValuesMakeNoTenantBeyondTheAllowedOnesAndTheDefault()
      throws Exception {
    try (MimirProcess mimir = MimirProcess.start();
        RelayFixture relay =
            new RelayFixture(
                Map.of(
                    "relay.downstream.url",
                    mimir.pushUrl().toString(),
                    "relay.tenant.allowed",
                    "team-a,team-b,team-c"))) {
      long now = System.currentTimeMillis();
      WriteRequestEncoder e = new WriteRequestEncoder();
      for (String t : List.of("team-a", "team-b", "team-c")) {
        e.beginSeries().label("__name__", "up").label("service_id", t).sample(1, now).endSeries();
      }
      Random random = new Random(11);
      for (int i = 0; i < 200; i++) {
        e.beginSeries()
            .label("__name__", "up")
            .label("i", Integer.toString(i))
            .label("service_id", "svc-" + Long.toHexString(random.nextLong()))
            .sample(1, now)
            .endSeries();
      }

      assertEquals(204, relay.write(e.toByteArray()).statusCode());

      assertEquals(Set.of("anonymous", "team-a", "team-b", "team-c"), mimirTenants(mimir));
      assertEquals("200", mimir.query("anonymous", "count(up)").get(0).value());
      for (String t : List.of("team-a", "team-b", "team-c")) {
        assertEquals("1", mimir.query(t, "count(up)").get(0).value(), t);
      }
      String metrics = relay.get("/metrics").body();
      assertEquals(4, Scrape.sum(metrics, "relay_lanes", Map.of()));
      assertEquals(
          200,
          Scrape.sum(metrics, "relay_series_defaulted_total", Map.of("reason", "not_allowed")));
      String tenants = relay.get("/api/v1/tenants").body();
      assertTrue(tenants.contains("\"tracked_tenants\":4,"), tenants);
      System.out.printf(
          "1 request with 200 random service_id values, relay.tenant.allowed of 3: Mimir tenants"
              + " %s, relay lanes %.0f%n",
          mimirTenants(mimir), Scrape.sum(metrics, "relay_lanes", Map.of()));
    }
  }
}
