package io.prwrelay.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RelayMetricsTest {
  /** Never moves unless a test moves it: no ranking runs on its own. */
  private final MockTicker ticker = Ticker.newMockTicker();

  private static double seriesIn(RelayMetrics m, String tenant) {
    var c = m.registry().find("relay.tenant.series.in").tag("tenant", tenant).counter();
    return c == null ? -1 : c.count();
  }

  @Test
  void tenantsBeyondTheBoundAreCountedAsOther() {
    RelayMetrics m = new RelayMetrics(2, ByteBufAllocator.DEFAULT, ticker);
    m.tenantIn("a", 1, 1 * 2L, 1 * 100);
    m.tenantIn("b", 2, 2 * 2L, 2 * 100);
    m.tenantIn("c", 3, 3 * 2L, 3 * 100);
    m.tenantIn("d", 4, 4 * 2L, 4 * 100);
    assertEquals(1, seriesIn(m, "a"));
    assertEquals(2, seriesIn(m, "b"));
    assertEquals(7, seriesIn(m, "other"));
    assertEquals(-1, seriesIn(m, "c"));
    assertTrue(m.scrape().contains("relay_tenant_series_in_total{tenant=\"other\"} 7.0"));
  }

  @Test
  void activeSeriesEstimatesAreReportedForTheTenantsWithinTheBound() {
    RelayMetrics m = new RelayMetrics(1, ByteBufAllocator.DEFAULT, ticker);
    m.activeSeries(tenant -> tenant.equals("a") ? 12345 : Double.NaN);
    m.tenantIn("a", 1, 1, 100);
    m.tenantIn("b", 1, 1, 100);
    String text = m.scrape();
    assertTrue(text.contains("relay_tenant_active_series_estimate{tenant=\"a\"} 12345.0"), text);
    assertFalse(text.contains("relay_tenant_active_series_estimate{tenant=\"other\"}"), text);
    assertFalse(text.contains("relay_tenant_active_series_estimate{tenant=\"b\"}"), text);
  }

  @Test
  void newSeriesAndTopMetricsAreReportedForTheTenantsWithinTheBoundAndFollowTheTop() {
    RelayMetrics m = new RelayMetrics(1, ByteBufAllocator.DEFAULT, ticker);
    m.newSeries(tenant -> tenant.equals("a") ? 200 : Double.NaN);
    java.util.concurrent.atomic.AtomicReference<List<InsightMetrics.MetricFigure>> top =
        new java.util.concurrent.atomic.AtomicReference<>(
            List.of(
                new InsightMetrics.MetricFigure("exploding_metric", 60_000, 199.5),
                new InsightMetrics.MetricFigure("up", 400, 0)));
    m.insightMetrics().topMetrics(tenant -> top.get());
    m.tenantIn("a", 1, 1, 100);
    m.tenantIn("b", 1, 1, 100);
    String text = m.scrape();
    assertTrue(text.contains("relay_tenant_new_series_per_second{tenant=\"a\"} 200.0"), text);
    assertFalse(text.contains("relay_tenant_new_series_per_second{tenant=\"b\"}"), text);
    assertTrue(
        text.contains(
            "relay_tenant_metric_new_series_per_second{metric=\"exploding_metric\",tenant=\"a\"}"
                + " 199.5"),
        text);
    assertTrue(
        text.contains(
            "relay_tenant_metric_active_series_estimate{metric=\"up\",tenant=\"a\"} 400.0"),
        text);
    assertFalse(
        text.contains("relay_tenant_metric_active_series_estimate{metric=\"up\",tenant=\"other\"}"),
        text);
    // A name that leaves the top loses its series at the next scrape.
    top.set(List.of(new InsightMetrics.MetricFigure("up", 400, Double.NaN)));
    text = m.scrape();
    assertFalse(text.contains("exploding_metric"), text);
    assertFalse(
        text.contains("relay_tenant_metric_new_series_per_second{metric=\"up\""),
        "no series while unknown: " + text);
    assertTrue(
        text.contains(
            "relay_tenant_metric_active_series_estimate{metric=\"up\",tenant=\"a\"} 400.0"),
        text);
  }

  @Test
  void splitSendsAreCountedPerTenantWithinTheBound() {
    RelayMetrics m = new RelayMetrics(1, ByteBufAllocator.DEFAULT, ticker);
    m.tenantIn("a", 1, 1, 100);
    m.laneObserver().splitSend("a", 4);
    m.laneObserver().splitSend("a", 4);
    m.laneObserver().splitSend("b", 1);
    String text = m.scrape();
    assertTrue(text.contains("relay_tenant_split_sends_total{tenant=\"a\"} 2.0"), text);
    assertTrue(text.contains("relay_tenant_split_sends_total{tenant=\"other\"} 1.0"), text);
  }

  @Test
  void aRankingRemovesTheSeriesOfTenantsThatFellOutOfTheTop() {
    RelayMetrics m = new RelayMetrics(2, ByteBufAllocator.DEFAULT, ticker);
    m.tenantIn("small-1", 1, 1 * 2L, 1 * 100);
    m.tenantIn("small-2", 1, 1 * 2L, 1 * 100);
    m.tenantIn("big", 1000, 1000 * 2L, 1000 * 100);
    m.tenantIn("bigger", 5000, 5000 * 2L, 5000 * 100);
    ticker.advance(RelayMetrics.DEFAULT_RERANK_INTERVAL.toNanos(), TimeUnit.NANOSECONDS);
    m.tenantIn("big", 10, 10 * 2L, 10 * 100);
    m.tenantIn("bigger", 10, 10 * 2L, 10 * 100);
    m.tenantIn("small-1", 10, 10 * 2L, 10 * 100);
    assertEquals(10, seriesIn(m, "big"));
    assertEquals(10, seriesIn(m, "bigger"));
    assertEquals(-1, seriesIn(m, "small-1"), "fell out of the top 2");
    assertFalse(m.scrape().contains("tenant=\"small-2\""));
  }
}
