package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.it.MiniJson;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testing.RawProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Series without the tenant label are counted and shown however few they are: one {@code ALERTS}
 * series among a hundred of team-a (Prometheus's own alerts carry no {@code service_id}) counts in
 * {@code relay_series_without_tenant_label_total} and in the line above the table of {@code
 * /tenants} (and in {@code /api/v1/tenants}), which says where it went under each {@code
 * relay.tenant.missing}.
 */
class SeriesWithoutTenantLabelTest {
  /** A hundred series of team-a, then one {@code ALERTS} series without the tenant label. */
  private static byte[] request() {
    List<byte[]> all = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      all.add(
          RawProto.series(
              RawProto.label("__name__", "up"),
              RawProto.label("i", "" + i),
              RawProto.label("service_id", "team-a"),
              RawProto.sample(1, 1_700_000_000_000L)));
    }
    all.add(
        RawProto.series(
            RawProto.label("__name__", "ALERTS"),
            RawProto.label("alertname", "Down"),
            RawProto.sample(1, 1_700_000_000_000L)));
    return RawProto.cat(all.toArray(new byte[0][]));
  }

  private static String line(RelayFixture f) throws Exception {
    String page = f.get("/tenants").body();
    int start = page.indexOf("<p class=\"unlabelled\">");
    assertTrue(start >= 0, page);
    int table = page.indexOf("<table", start);
    assertTrue(table > start, "the line is above the table");
    return page.substring(start, page.indexOf("</p>", start) + 4);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> api(RelayFixture f) throws Exception {
    Map<String, Object> doc = (Map<String, Object>) MiniJson.parse(f.get("/api/v1/tenants").body());
    return (Map<String, Object>) doc.get("series_without_tenant_label_last_minute");
  }

  private static double scraped(RelayFixture f, String name, Map<String, String> labels)
      throws Exception {
    return Scrape.sumOr(f.get("/metrics").body(), name, labels, 0);
  }

  @Test
  void oneSeriesInAHundredIsCountedAndShownGoingToTheDefaultTenant() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of())) {
      assertEquals(
          "<p class=\"unlabelled\">Series without a tenant label (service_id) in the last"
              + " minute: none</p>",
          line(f));
      assertEquals(204, f.write(request()).statusCode());
      assertEquals(204, f.write(request()).statusCode());

      Map<String, Long> series = new TreeMap<>();
      f.downstream.counts().forEach((t, c) -> series.put(t, c.series()));
      assertEquals(Map.of("anonymous", 2L, "team-a", 200L), series);
      assertEquals(2, scraped(f, "relay_series_without_tenant_label_total", Map.of()));
      assertEquals(
          "<p class=\"unlabelled\">Series without a tenant label (service_id) in the last"
              + " minute: <b>2</b> — 2 to the default tenant <span class=\"metric\">anonymous"
              + "</span>, 0 dropped, 0 in requests answered 400</p>",
          line(f));
      assertEquals(Map.of("default_tenant", 2.0, "dropped", 0.0, "rejected", 0.0), api(f));
    }
  }

  @Test
  void underDropTheLineSaysDropped() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.tenant.missing", "drop"))) {
      assertEquals(204, f.write(request()).statusCode());

      assertEquals(List.of("team-a"), List.copyOf(f.downstream.counts().keySet()));
      assertEquals(1, scraped(f, "relay_series_without_tenant_label_total", Map.of()));
      assertTrue(
          line(f)
              .contains(
                  "<b>1</b> — 0 to the default tenant <span class=\"metric\">anonymous"
                      + "</span>, 1 dropped, 0 in requests answered 400"),
          line(f));
      assertEquals(Map.of("default_tenant", 0.0, "dropped", 1.0, "rejected", 0.0), api(f));
    }
  }

  /**
   * Under {@code reject} the request is answered 400 and its series count as rejected (the ones the
   * router read before it stopped at the series without the label), as {@code
   * relay_series_rejected_total{reason="no_tenant"}} counts them.
   */
  @Test
  void underRejectTheLineCountsTheRejectedRequestsSeries() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.tenant.missing", "reject"))) {
      assertEquals(400, f.write(request()).statusCode());

      assertEquals(Map.of(), f.downstream.counts());
      double rejected = scraped(f, "relay_series_rejected_total", Map.of("reason", "no_tenant"));
      assertTrue(rejected > 0);
      assertTrue(
          line(f)
              .contains(
                  "<b>"
                      + (long) rejected
                      + "</b> — 0 to the default tenant <span class=\"metric\">anonymous</span>, 0"
                      + " dropped, "
                      + (long) rejected
                      + " in requests answered 400"),
          line(f));
    }
  }
}
