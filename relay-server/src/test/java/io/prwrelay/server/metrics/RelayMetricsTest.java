package io.prwrelay.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.downstream.TenantSend;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RelayMetricsTest {
  private static TenantSend send(String tenant, int series) {
    return new TenantSend(tenant, null, new SeriesCounts(series, series * 2L, 0, 0), series * 100);
  }

  private static double seriesIn(RelayMetrics m, String tenant) {
    var c = m.registry().find("relay.tenant.series.in").tag("tenant", tenant).counter();
    return c == null ? -1 : c.count();
  }

  @Test
  void tenantsBeyondTheBoundAreCountedAsOther() {
    RelayMetrics m = new RelayMetrics(2, ByteBufAllocator.DEFAULT, Duration.ofHours(1));
    m.tenantIn(send("a", 1));
    m.tenantIn(send("b", 2));
    m.tenantIn(send("c", 3));
    m.tenantIn(send("d", 4));
    assertEquals(1, seriesIn(m, "a"));
    assertEquals(2, seriesIn(m, "b"));
    assertEquals(7, seriesIn(m, "other"));
    assertEquals(-1, seriesIn(m, "c"));
    assertTrue(m.scrape().contains("relay_tenant_series_in_total{tenant=\"other\"} 7.0"));
  }

  @Test
  void rankingAdmitsTheTopTenantsByVolume() throws Exception {
    RelayMetrics m = new RelayMetrics(2, ByteBufAllocator.DEFAULT, Duration.ofMillis(50));
    m.tenantIn(send("small-1", 1));
    m.tenantIn(send("small-2", 1));
    m.tenantIn(send("big", 1000));
    m.tenantIn(send("bigger", 5000));
    Thread.sleep(60);
    m.tenantIn(send("big", 10));
    m.tenantIn(send("bigger", 10));
    m.tenantIn(send("small-1", 10));
    assertEquals(10, seriesIn(m, "big"));
    assertEquals(10, seriesIn(m, "bigger"));
    assertEquals(-1, seriesIn(m, "small-1"), "fell out of the top 2");
    assertFalse(m.scrape().contains("tenant=\"small-2\""));
  }
}
