package io.prwrelay.server.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The tenant insight's per-metric gauges, {@code relay_tenant_metric_active_series_estimate} and
 * {@code relay_tenant_metric_new_series_per_second}: for every tenant with meters of its own (at
 * most {@code relay.metrics.max-tenants}), its top metric names (at most five each, names of at
 * most 256 bytes), replaced as a whole before each scrape. The names change as the tenants' series
 * do, so these are {@link MultiGauge}s rather than gauges registered per tenant; a name that leaves
 * a tenant's top, or a tenant that loses its meters, loses its series at the next scrape.
 */
public final class InsightMetrics {
  private final MultiGauge active;
  private final MultiGauge fresh;
  private volatile Function<String, List<MetricFigure>> top;

  InsightMetrics(MeterRegistry registry) {
    active = MetricCatalogue.TENANT_METRIC_ACTIVE_SERIES.multiGauge(registry);
    fresh = MetricCatalogue.TENANT_METRIC_NEW_SERIES.multiGauge(registry);
  }

  /** A metric name of a tenant, as the per-metric gauges report it. */
  public record MetricFigure(String metric, double activeSeries, double newSeriesPerSecond) {}

  /**
   * The tenant insight's top metric names of a tenant, reported for every tenant with meters of its
   * own. Set before the first scrape.
   */
  public void topMetrics(Function<String, List<MetricFigure>> top) {
    this.top = top;
  }

  /** Replaces the series with the top metrics now of {@code tenants}. */
  void refresh(List<String> tenants) {
    Function<String, List<MetricFigure>> t = top;
    if (t == null) {
      return;
    }
    List<MultiGauge.Row<?>> activeRows = new ArrayList<>();
    List<MultiGauge.Row<?>> freshRows = new ArrayList<>();
    for (String tenant : tenants) {
      for (MetricFigure f : t.apply(tenant)) {
        activeRows.add(
            MetricCatalogue.TENANT_METRIC_ACTIVE_SERIES.row(f.activeSeries(), tenant, f.metric()));
        if (!Double.isNaN(f.newSeriesPerSecond())) {
          freshRows.add(
              MetricCatalogue.TENANT_METRIC_NEW_SERIES.row(
                  f.newSeriesPerSecond(), tenant, f.metric()));
        }
      }
    }
    active.register(activeRows, true);
    fresh.register(freshRows, true);
  }
}
