package io.prwrelay.server.metrics;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The part of a scrape one reader may see: only the series of the {@link MetricCatalogue} metrics
 * that carry a {@code tenant} label, and of those only the series of the tenants the reader may see
 * (never {@code tenant="other"}, the sum of every tenant beyond {@code relay.metrics.max-tenants}).
 * Relay-wide series (requests by status, connections, memory, the downstream) describe every
 * sender's traffic together and are left out, as is a family with no series left. Written in the
 * same text format as the whole scrape.
 *
 * <p>Every per-tenant metric is a counter or a gauge ({@link MetricCatalogue}); a family of another
 * type is left out whole.
 */
final class TenantScrape {
  /** The tag every per-tenant metric has. */
  static final String TENANT = "tenant";

  private TenantScrape() {}

  /**
   * @param visible whether the reader may see the series of a tenant ID
   */
  static String of(PrometheusRegistry registry, Predicate<String> visible) {
    List<MetricSnapshot> kept = new ArrayList<>();
    for (MetricSnapshot s : registry.scrape()) {
      MetricSnapshot k = keep(s, visible);
      if (k != null) {
        kept.add(k);
      }
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      PrometheusTextFormatWriter.create().write(out, new MetricSnapshots(kept));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  /** {@code s} with only the visible tenants' series, or null when none is left. */
  private static MetricSnapshot keep(MetricSnapshot s, Predicate<String> visible) {
    if (s instanceof CounterSnapshot c) {
      List<CounterDataPointSnapshot> points = visiblePoints(c.getDataPoints(), visible);
      return points.isEmpty() ? null : new CounterSnapshot(c.getMetadata(), points);
    }
    if (s instanceof GaugeSnapshot g) {
      List<GaugeDataPointSnapshot> points = visiblePoints(g.getDataPoints(), visible);
      return points.isEmpty() ? null : new GaugeSnapshot(g.getMetadata(), points);
    }
    return null;
  }

  private static <P extends DataPointSnapshot> List<P> visiblePoints(
      List<P> points, Predicate<String> visible) {
    List<P> kept = new ArrayList<>();
    for (P p : points) {
      String tenant = p.getLabels().get(TENANT);
      if (tenant != null && !tenant.equals(TenantAdmission.OTHER) && visible.test(tenant)) {
        kept.add(p);
      }
    }
    return kept;
  }
}
