package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A tenant over its series limit in a real Grafana Mimir ({@link MimirProcess}): Mimir answers 400
 * {@code per-user series limit of 5 exceeded} to every push with new series of it; after three in a
 * row its lane is {@code rejecting} on {@code /api/v1/tenants}, on {@code /tenants} and in {@code
 * relay_tenant_lane_state}, while the other tenant of the same requests stays healthy; once the
 * limit is raised in Mimir's runtime configuration the next push is accepted and the lane is
 * healthy again.
 */
@ExtendWith(MimirProcess.Required.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MimirRejectingTenantTest {
  private static final Map<String, String> FIVE = Map.of("max_global_series_per_user", "5");

  private final AtomicInteger written = new AtomicInteger();

  /** One request: {@code limited} new series of tenant {@code limited}, one new of tenant ok. */
  private HttpResponse<String> write(RelayFixture relay, int limited) throws Exception {
    int n = written.incrementAndGet();
    long now = System.currentTimeMillis();
    WriteRequestEncoder e = new WriteRequestEncoder();
    for (int j = 0; j < limited; j++) {
      e.beginSeries()
          .label("__name__", "m" + n + "_" + j)
          .label("service_id", "limited")
          .sample(n, now)
          .endSeries();
    }
    e.beginSeries().label("__name__", "n" + n).label("service_id", "ok").sample(n, now).endSeries();
    return relay.write(e.toByteArray());
  }

  /** The {@code lane} object of {@code tenant} on {@code /api/v1/tenants}. */
  @SuppressWarnings("unchecked")
  private static Map<String, Object> lane(RelayFixture relay, String tenant) throws Exception {
    Map<String, Object> doc =
        (Map<String, Object>) MiniJson.parse(relay.get("/api/v1/tenants").body());
    for (Map<String, Object> row : (List<Map<String, Object>>) doc.get("tenants")) {
      if (tenant.equals(row.get("tenant"))) {
        return (Map<String, Object>) row.get("lane");
      }
    }
    throw new AssertionError("no row of " + tenant + " in " + doc);
  }

  private static String state(RelayFixture relay, String tenant) {
    try {
      return (String) lane(relay, tenant).get("state");
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The lane cell of {@code tenant}'s row on the {@code /tenants} page. */
  private static String laneCell(RelayFixture relay, String tenant) throws Exception {
    String page = relay.get("/tenants").body();
    int row = page.indexOf("<tr data-tenant=\"" + tenant + "\">");
    assertTrue(row >= 0, page);
    int cell = page.indexOf("<td class=\"lane\"", row);
    return page.substring(cell, page.indexOf("</td>", cell));
  }

  private static double metric(RelayFixture relay, String name, Map<String, String> labels)
      throws Exception {
    return Scrape.sumOr(relay.get("/metrics").body(), name, labels, 0);
  }

  @Test
  void aTenantOverItsSeriesLimitIsShownRejectingUntilTheLimitIsRaised() throws Exception {
    try (MimirProcess mimir = MimirProcess.start(Map.of("limited", FIVE));
        RelayFixture relay =
            new RelayFixture(Map.of("relay.downstream.url", mimir.pushUrl().toString()))) {
      assertEquals(204, write(relay, 5).statusCode(), "five series: within the limit");

      for (int i = 1; i <= 3; i++) {
        HttpResponse<String> r = write(relay, 2);
        assertEquals(400, r.statusCode(), r.body());
        assertTrue(r.body().contains("per-user series limit of 5 exceeded"), r.body());
        assertTrue(r.body().contains("tenant limited"), r.body());
        assertEquals(
            i < 3 ? 0 : 3,
            metric(relay, "relay_tenant_lane_state", Map.of("tenant", "limited")),
            "after " + i + " rejections");
      }
      // The tenant rows are computed at most once a second.
      assertTrue(
          Await.within(Duration.ofSeconds(5), () -> "rejecting".equals(state(relay, "limited"))),
          () -> state(relay, "limited"));

      Map<String, Object> rejecting = lane(relay, "limited");
      String reason = (String) rejecting.get("reason");
      assertNotNull(reason);
      assertTrue(reason.startsWith("downstream answered 400: "), reason);
      assertTrue(reason.contains("per-user series limit of 5 exceeded"), reason);
      assertTrue(((String) rejecting.get("since")).endsWith("Z"), rejecting.toString());
      assertEquals("healthy", lane(relay, "ok").get("state"), "the other tenant of each request");
      String cell = laneCell(relay, "limited");
      assertTrue(cell.contains("<span class=\"rejecting\">rejecting</span>"), cell);
      assertTrue(cell.contains("per-user series limit of 5 exceeded"), cell);
      assertEquals(3, metric(relay, "relay_tenant_lane_state", Map.of("tenant", "limited")));
      assertEquals(0, metric(relay, "relay_tenant_lane_state", Map.of("tenant", "ok")));
      assertEquals(1, metric(relay, "relay_lanes_not_healthy", Map.of("state", "rejecting")));
      assertEquals("5", mimir.query("limited", "count({service_id=\"limited\"})").get(0).value());
      assertEquals("4", mimir.query("ok", "count({service_id=\"ok\"})").get(0).value());

      mimir.setTenantLimits(Map.of("limited", Map.of("max_global_series_per_user", "100")));
      // Mimir shows the new limit on /runtime_config before every part of it applies it: the
      // push is tried until it is accepted (each with new series), and each answer counts.
      AtomicReference<HttpResponse<String>> last = new AtomicReference<>();
      AtomicInteger pushes = new AtomicInteger();
      boolean accepted =
          Await.within(
              Duration.ofSeconds(20),
              () -> {
                try {
                  pushes.incrementAndGet();
                  last.set(write(relay, 2));
                  return last.get().statusCode() == 204;
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      assertTrue(accepted, () -> last.get().statusCode() + " " + last.get().body());
      assertEquals(0, metric(relay, "relay_tenant_lane_state", Map.of("tenant", "limited")));
      assertTrue(
          Await.within(Duration.ofSeconds(5), () -> "healthy".equals(state(relay, "limited"))),
          () -> state(relay, "limited"));

      Map<String, Object> healthy = lane(relay, "limited");
      assertEquals("healthy", healthy.get("state"));
      assertEquals(null, healthy.get("reason"));
      assertTrue(laneCell(relay, "limited").contains("<span class=\"healthy\">healthy</span>"));
      assertEquals(0, metric(relay, "relay_lanes_not_healthy", Map.of("state", "rejecting")));
      System.out.printf(
          "tenant limited (max_global_series_per_user 5): 3 pushes answered 400 made its lane"
              + " rejecting (%s); limit raised to 100: accepted after %d push(es), lane %s%n",
          reason, pushes.get(), healthy.get("state"));
    }
  }
}
