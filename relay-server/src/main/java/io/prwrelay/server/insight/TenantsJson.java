package io.prwrelay.server.insight;

import io.prwrelay.core.route.SeriesDigests;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * {@code GET /api/v1/tenants}: the rows of {@link TenantInsight} as JSON, most active series first.
 * Every field is documented in docs/metrics.md ("Tenant insight"); absent values are {@code null},
 * never NaN. At most {@link ResponseBound#MAX_BYTES} bytes: the rows that do not fit are left out
 * and counted in {@code tenants_omitted}.
 */
public final class TenantsJson {
  private TenantsJson() {}

  /**
   * The document for {@code insight}'s rows now, with the relay's series without a tenant label.
   */
  public static String render(TenantInsight insight) {
    return render(insight, tenant -> true, true);
  }

  /**
   * The document for the rows of the tenants {@code visible} accepts: what a reader limited to some
   * tenants may see (the counts it shows are of those rows; {@code
   * series_without_tenant_label_last_minute} is {@code null}).
   */
  public static String render(TenantInsight insight, Predicate<String> visible) {
    return render(insight, visible, false);
  }

  private static String render(
      TenantInsight insight, Predicate<String> visible, boolean relayWide) {
    List<TenantRow> rows = insight.rows().stream().filter(r -> visible.test(r.tenant())).toList();
    long now = insight.nowMillis();
    StringBuilder b = new StringBuilder(Math.min(256 + rows.size() * 512, 64 << 10));
    b.append("{\"window_seconds\":")
        .append(insight.windowSeconds())
        .append(",\"generated_at\":")
        .append(Escape.json(Instant.ofEpochMilli(now).toString()))
        .append(",\"tracked_tenants\":")
        .append(rows.size())
        .append(",\"max_tenants\":")
        .append(insight.maxTenants())
        .append(",\"name_sample_rate\":")
        .append(number(1.0 / (1 << SeriesDigests.NAME_SAMPLE_BITS)))
        .append(",\"series_without_tenant_label_last_minute\":");
    if (relayWide) {
      UnlabelledSeries.Figures f = insight.unlabelledLastMinute();
      b.append("{\"default_tenant\":")
          .append(f.defaultTenant())
          .append(",\"dropped\":")
          .append(f.dropped())
          .append(",\"rejected\":")
          .append(f.rejected())
          .append('}');
    } else {
      b.append("null");
    }
    b.append(",\"tenants\":[");
    int bytes = ResponseBound.utf8Length(b, 0, b.length());
    int shown = 0;
    for (TenantRow r : rows) {
      int start = b.length();
      if (shown > 0) {
        b.append(',');
      }
      row(b, r, now, insight.queueMode());
      if (insight.showsLimits()) {
        b.setLength(b.length() - 1); // the row's closing brace: the limits' columns go inside
        LimitsColumns.json(b, insight.limitsOf(r.tenant()));
        b.append('}');
      }
      int rowBytes = ResponseBound.utf8Length(b, start, b.length());
      if (bytes + rowBytes > ResponseBound.MAX_BYTES - ResponseBound.RESERVE) {
        b.setLength(start);
        break;
      }
      bytes += rowBytes;
      shown++;
    }
    return b.append("],\"tenants_omitted\":").append(rows.size() - shown).append("}\n").toString();
  }

  private static void row(StringBuilder b, TenantRow r, long now, boolean queueMode) {
    TenantWindow.Snapshot w = r.window();
    b.append("{\"tenant\":")
        .append(Escape.json(r.tenant()))
        .append(",\"active_series_estimate\":")
        .append(w.activeSeries())
        .append(",\"active_series_window_ago\":")
        .append(number(w.windowAgo()))
        .append(",\"active_series_growth\":")
        .append(number(r.growth()))
        .append(",\"new_series_per_second\":")
        .append(number(w.newSeriesPerSecond()))
        .append(",\"exploding\":")
        .append(r.exploding())
        .append(",\"series_per_second\":")
        .append(number(w.seriesPerSecond()))
        .append(",\"bytes_per_second\":")
        .append(number(w.bytesPerSecond()))
        .append(",\"top_metrics\":[");
    List<TenantWindow.TopMetric> top = w.topMetrics();
    for (int i = 0; i < top.size(); i++) {
      if (i > 0) {
        b.append(',');
      }
      TenantWindow.TopMetric m = top.get(i);
      b.append("{\"name\":")
          .append(Escape.json(m.name()))
          .append(",\"share\":")
          .append(number(m.share()))
          .append(",\"active_series_estimate\":")
          .append(Math.round(m.share() * w.activeSeries()))
          .append(",\"new_series_per_second\":")
          .append(number(m.newSeriesPerSecond()))
          .append(",\"traffic_share\":")
          .append(number(m.trafficShare()))
          .append('}');
    }
    b.append("],\"lane\":{\"state\":")
        .append(Escape.json(r.laneState()))
        .append(",\"since\":")
        .append(r.lane() == null ? "null" : time(r.lane().sinceMillis()))
        .append(",\"reason\":")
        .append(
            r.lane() == null || r.lane().reason() == null ? "null" : Escape.json(r.lane().reason()))
        .append("},\"queue_bytes\":")
        .append(queueMode ? Long.toString(r.queueBytes()) : "null")
        .append(",\"queue_oldest_age_seconds\":")
        .append(
            !queueMode
                ? "null"
                : r.oldestQueuedMillis() < 0
                    ? "0"
                    : number(Math.max(0, now - r.oldestQueuedMillis()) / 1000.0))
        .append(",\"last_error\":");
    if (r.lastError() == null) {
      b.append("null");
    } else {
      b.append("{\"status\":")
          .append(r.lastError().status())
          .append(",\"message\":")
          .append(Escape.json(r.lastError().message()))
          .append(",\"at\":")
          .append(time(r.lastError().atMillis()))
          .append('}');
    }
    b.append('}');
  }

  private static String time(long millis) {
    return Escape.json(Instant.ofEpochMilli(millis).toString());
  }

  /** A finite number with at most three decimals, or {@code null}. */
  static String number(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "null";
    }
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    return String.format(Locale.ROOT, "%.3f", v);
  }
}
