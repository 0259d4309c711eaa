package io.prwrelay.server.insight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.SeriesDigests;
import io.prwrelay.core.route.TenantRouter;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.server.config.InsightConfig;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.it.MiniJson;
import io.prwrelay.server.lane.Lane;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * What the tenant insight keeps and shows of what senders chose, bounded whatever they send: metric
 * names cut by the router and shown so, the name table bounded in bytes as well as names, lane
 * reasons and error messages cut, and {@code /tenants} and {@code /api/v1/tenants} at most {@link
 * ResponseBound#MAX_BYTES}, keeping the most active tenants.
 */
class InsightBoundsTest {
  private static final Duration WINDOW = Duration.ofMinutes(10);

  private final AtomicLong now = new AtomicLong(WINDOW.toNanos() * 100);
  private final TenantRouter router =
      new TenantRouter(TenantRules.builder().labels("service_id").build(), true);

  private TenantInsight insight(int maxTenants) {
    return new TenantInsight(
        new InsightConfig(true, WINDOW, maxTenants), now::get, () -> now.get() / 1_000_000);
  }

  /**
   * Routes {@code count} series of {@code tenant} in one request, series i named {@code names[i %
   * names.length]}, and records them.
   */
  private void send(TenantInsight insight, String tenant, int count, String... names) {
    WriteRequestEncoder e = new WriteRequestEncoder(1 << 16);
    for (int i = 0; i < count; i++) {
      e.beginSeries()
          .label("__name__", names[i % names.length])
          .label("id", Integer.toString(i))
          .label("service_id", tenant)
          .sample(1, 1)
          .endSeries();
    }
    ByteBuf in = Unpooled.wrappedBuffer(e.toByteArray());
    RouteResult r = router.route(in, PooledByteBufAllocator.DEFAULT);
    try {
      assertNull(r.error());
      insight.record(r);
    } finally {
      r.clear();
      in.release();
    }
  }

  @Test
  void aLongMetricNameIsShownAsItsFirstBytesAndAMarker() {
    TenantInsight insight = insight(10);
    // (PRW 1.0 reads names whose label field has a length of up to two bytes: 16 KiB.)
    send(insight, "t", 200, "m".repeat(10_000));
    now.addAndGet(TenantInsight.SNAPSHOT_NANOS);
    List<TenantWindow.TopMetric> top = insight.rows().get(0).window().topMetrics();
    assertEquals(1, top.size());
    assertEquals("m".repeat(SeriesDigests.MAX_NAME_BYTES - 3) + "\u2026", top.get(0).name());
  }

  @Test
  void theNameTableStartsOverAtItsByteBound() {
    MetricNames names = new MetricNames(16_384, 64 << 10);
    String tail = "x".repeat(200);
    long cost = MetricNames.cost("0000" + tail);
    assertEquals(MetricNames.ENTRY_BYTES + 204, cost);
    int fit = (int) ((64 << 10) / cost);
    for (int i = 0; i < fit; i++) {
      byte[] b = String.format("%04d%s", i, tail).getBytes(StandardCharsets.UTF_8);
      names.learn(i, b, 0, b.length);
      assertTrue(names.bytes() <= names.maxBytes(), "bytes " + names.bytes());
    }
    assertEquals(fit, names.size());
    assertEquals("0000" + tail, names.get(0));
    byte[] next = String.format("%04d%s", fit, tail).getBytes(StandardCharsets.UTF_8);
    names.learn(fit, next, 0, next.length);
    assertEquals(1, names.size(), "started over");
    assertNull(names.get(0));
    assertEquals(String.format("%04d%s", fit, tail), names.get(fit));
    // Characters outside Latin-1 take two bytes in a string.
    assertEquals(MetricNames.ENTRY_BYTES + 2, MetricNames.cost("\u20ac"));
    assertEquals(MetricNames.ENTRY_BYTES + 1, MetricNames.cost("\u00e9"));
  }

  @Test
  void theNameTableStartsOverAtItsCountBound() {
    MetricNames names = new MetricNames(16, 1 << 20);
    for (int i = 0; i <= 16; i++) {
      byte[] b = ("m" + i).getBytes(StandardCharsets.UTF_8);
      names.learn(i, b, 0, b.length);
    }
    assertEquals(1, names.size());
    assertEquals("m16", names.get(16));
  }

  @Test
  void laneReasonsAndErrorMessagesAreKeptToTheirFirstCharacters() {
    TenantInsight insight = insight(10);
    send(insight, "t", 10, "up");
    insight.stateChanged("t", Lane.State.THROTTLED, "r".repeat(100_000), 1_000_000_000L);
    insight.attempt("t", 1, new AttemptOutcome(429, "e".repeat(100_000), 1000), 1);
    now.addAndGet(TenantInsight.SNAPSHOT_NANOS);
    TenantRow row = insight.rows().get(0);
    String cut = "r".repeat(TenantInsight.MAX_MESSAGE_CHARS) + "\u2026";
    assertEquals(cut, row.lane().reason());
    assertEquals(
        ("downstream answered 429: " + "e".repeat(TenantInsight.MAX_MESSAGE_CHARS))
                .substring(0, TenantInsight.MAX_MESSAGE_CHARS)
            + "\u2026",
        row.lastError().message());
  }

  @Test
  void thePageAndTheJsonStayWithinTheirBoundShowingTheMostActiveTenants() {
    TenantInsight insight = insight(1000);
    String[] names = new String[5];
    for (int n = 0; n < names.length; n++) {
      names[n] = n + "<".repeat(400);
    }
    int tenants = 300;
    for (int t = 0; t < tenants; t++) {
      // The longest valid tenant IDs, each ' taking six bytes in JSON and five in HTML.
      String tenant = String.format("%03d", t) + "'".repeat(147);
      send(insight, tenant, 40 + t / 10, names);
      insight.stateChanged(tenant, Lane.State.THROTTLED, "<".repeat(1000), 1_000_000_000L);
      insight.attempt(tenant, 1, new AttemptOutcome(429, "<".repeat(1000), 1000), 1);
    }
    now.addAndGet(TenantInsight.SNAPSHOT_NANOS);
    List<TenantRow> rows = insight.rows();
    assertEquals(tenants, rows.size());

    String json = TenantsJson.render(insight);
    assertTrue(json.getBytes(StandardCharsets.UTF_8).length <= ResponseBound.MAX_BYTES);
    @SuppressWarnings("unchecked")
    Map<String, Object> doc = (Map<String, Object>) MiniJson.parse(json);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> shown = (List<Map<String, Object>>) doc.get("tenants");
    double omitted = (Double) doc.get("tenants_omitted");
    assertTrue(omitted > 0, "omitted: " + omitted);
    assertEquals(tenants, shown.size() + (int) omitted);
    assertEquals((double) tenants, doc.get("tracked_tenants"));
    for (int i = 0; i < shown.size(); i++) {
      assertEquals(rows.get(i).tenant(), shown.get(i).get("tenant"), "most active first");
    }
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> top = (List<Map<String, Object>>) shown.get(0).get("top_metrics");
    for (Map<String, Object> m : top) {
      String name = (String) m.get("name");
      assertTrue(name.endsWith("<\u2026"), name);
      assertEquals(SeriesDigests.MAX_NAME_BYTES, name.getBytes(StandardCharsets.UTF_8).length);
    }

    String html = TenantsPage.render(insight);
    assertTrue(html.getBytes(StandardCharsets.UTF_8).length <= ResponseBound.MAX_BYTES);
    int rowsShown = html.split("<tr data-tenant=", -1).length - 1;
    assertTrue(rowsShown < tenants, "rows: " + rowsShown);
    assertTrue(
        html.contains(
            "; the "
                + (tenants - rowsShown)
                + " with the fewest active series are not shown (the page is limited to 2 MiB)"),
        html.substring(0, 4000));
    assertTrue(html.endsWith("</script></body></html>\n"));
    assertTrue(
        html.contains("data-tenant=\"" + Escape.html(rows.get(rowsShown - 1).tenant()) + "\""));
    assertTrue(!html.contains("data-tenant=\"" + Escape.html(rows.get(rowsShown).tenant()) + "\""));
  }
}
