package io.prwrelay.server.insight;

import io.prwrelay.server.limits.TenantLimits;
import java.util.List;

/**
 * The per-tenant limits' columns of {@code /tenants} and {@code /api/v1/tenants}: the tenant's
 * series limit and the active series it counts in this window, its samples-per-second limit, and
 * the metric names of the series its series limit dropped (sampled, most first, at most five). Kept
 * apart from the insight's own columns: the limits are another component's, shown beside them.
 */
final class LimitsColumns {
  private LimitsColumns() {}

  /** Appends {@code ,"limits":{...}}, or {@code ,"limits":null} for a tenant without limits. */
  static void json(StringBuilder b, TenantLimits.Usage u) {
    b.append(",\"limits\":");
    if (u == null) {
      b.append("null");
      return;
    }
    b.append("{\"max_series\":")
        .append(u.maxSeries())
        .append(",\"active_series\":")
        .append(u.maxSeries() == 0 ? "null" : Long.toString(u.activeSeries()))
        .append(",\"samples_per_second\":")
        .append(u.samplesPerSecond())
        .append(",\"samples_burst\":")
        .append(u.samplesPerSecond() == 0 ? "null" : Long.toString(u.samplesBurst()))
        .append(",\"limited_metrics\":[");
    List<String> names = u.limitedNames();
    for (int i = 0; i < names.size(); i++) {
      if (i > 0) {
        b.append(',');
      }
      b.append(Escape.json(names.get(i)));
    }
    b.append("]}");
  }

  /** The page's header cell. */
  static void header(StringBuilder b) {
    b.append("<th class=\"num\">Limits</th>");
  }

  /** The page's cell: series used of the limit, the rate limit, the dropped series' metrics. */
  static void cell(StringBuilder b, TenantLimits.Usage u) {
    b.append("<td class=\"num limits\" data-label=\"Limits\"");
    if (u == null) {
      b.append("><span class=\"small\">—</span></td>");
      return;
    }
    double use = u.maxSeries() == 0 ? 0 : (double) u.activeSeries() / u.maxSeries();
    b.append(" data-v=\"").append(TenantsJson.number(use)).append("\">");
    if (u.maxSeries() > 0) {
      b.append(u.activeSeries())
          .append(" / ")
          .append(u.maxSeries())
          .append(" series (")
          .append(Math.round(use * 100))
          .append(" %)");
    }
    if (u.samplesPerSecond() > 0) {
      b.append(u.maxSeries() > 0 ? "<br>" : "").append(u.samplesPerSecond()).append(" samples/s");
    }
    if (!u.limitedNames().isEmpty()) {
      b.append("<br><span class=\"small\">dropped: ")
          .append(Escape.html(String.join(", ", u.limitedNames())))
          .append("</span>");
    }
    b.append("</td>");
  }
}
