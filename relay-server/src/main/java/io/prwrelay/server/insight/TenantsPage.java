package io.prwrelay.server.insight;

import io.prwrelay.core.route.SeriesDigests;
import io.prwrelay.server.limits.TenantLimits;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * {@code GET /tenants}: the rows of {@link TenantInsight} as one self-contained HTML page (its
 * style and script inline, no external asset), rendered on the server so that it reads without
 * JavaScript. The script sorts by any column (click a header; numbers by value) and every five
 * seconds fetches the page again and swaps in its table body, keeping the sort. On a narrow screen
 * each row becomes a card. Every tenant ID, metric name and message is HTML-escaped ({@link
 * Escape#html}); the script moves parsed nodes, never builds markup from text. At most {@link
 * ResponseBound#MAX_BYTES} bytes: the rows that do not fit (the least active) are left out, and the
 * page says how many.
 */
public final class TenantsPage {
  private TenantsPage() {}

  private static final String STYLE =
      """
      :root{color-scheme:light dark;--muted:#777;--bad:#c0392b;--warn:#d68910;--ok:#1e8449}
      body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;padding:12px}
      h1{font-size:18px;margin:0 0 4px}
      p.meta{color:var(--muted);margin:0 0 10px;font-size:12px}
      p.unlabelled{margin:0 0 10px;font-size:13px}p.unlabelled b{color:var(--warn)}
      .wrap{overflow-x:auto}
      table{border-collapse:collapse;width:100%}
      th,td{padding:6px 8px;border-bottom:1px solid #8884;text-align:left;vertical-align:top}
      th{cursor:pointer;user-select:none;white-space:nowrap;font-weight:600}
      th[aria-sort=descending]::after{content:" \\25BE"}
      th[aria-sort=ascending]::after{content:" \\25B4"}
      td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
      td.tenant{font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
      .metric{font-family:ui-monospace,Menlo,Consolas,monospace}
      .share{color:var(--muted)}
      .up{color:var(--bad);font-weight:600}
      .healthy{color:var(--ok)}.backing_off{color:var(--bad)}.throttled{color:var(--warn)}
      .rejecting{color:var(--bad);font-weight:600}
      .small{color:var(--muted);font-size:12px}
      svg.spark{vertical-align:middle;margin-left:6px}
      @media (max-width:720px){
        table,tbody,tr,td{display:block;width:auto}
        thead{display:none}
        tr{border:1px solid #8886;border-radius:6px;margin:0 0 10px;padding:4px}
        td{border:0;padding:3px 6px;text-align:left}
        td.num{text-align:left}
        td::before{content:attr(data-label) ": ";color:var(--muted);font-size:12px}
      }
      """;

  private static final String SCRIPT =
      """
      (function(){
        var key=null,dir=-1;
        function val(tr,i){var td=tr.children[i];var v=td.getAttribute('data-v');
          return v===null?td.textContent.toLowerCase():parseFloat(v);}
        function sort(){if(key===null)return;var tb=document.querySelector('tbody');
          var rows=Array.prototype.slice.call(tb.rows);
          rows.sort(function(a,b){var x=val(a,key),y=val(b,key);return x<y?-dir:x>y?dir:0;});
          rows.forEach(function(r){tb.appendChild(r);});
          document.querySelectorAll('th').forEach(function(th,i){
            if(i===key)th.setAttribute('aria-sort',dir>0?'ascending':'descending');
            else th.removeAttribute('aria-sort');});}
        document.querySelectorAll('th').forEach(function(th,i){th.addEventListener('click',function(){
          dir=key===i?-dir:(th.classList.contains('num')?-1:1);key=i;sort();});});
        function refresh(){fetch(location.href,{cache:'no-store',credentials:'same-origin'})
          .then(function(r){if(!r.ok)throw new Error(r.status);return r.text();})
          .then(function(t){var d=new DOMParser().parseFromString(t,'text/html');
            var nb=d.querySelector('tbody'),nm=d.querySelector('p.meta');
            if(nb){var ob=document.querySelector('tbody');ob.parentNode.replaceChild(document.adoptNode(nb),ob);}
            if(nm){var om=document.querySelector('p.meta');om.parentNode.replaceChild(document.adoptNode(nm),om);}
            var nu=d.querySelector('p.unlabelled'),ou=document.querySelector('p.unlabelled');
            if(nu&&ou){ou.parentNode.replaceChild(document.adoptNode(nu),ou);}
            sort();})
          .catch(function(e){var m=document.querySelector('p.meta');if(m)m.textContent='refresh failed ('+e.message+'); retrying';});}
        setInterval(refresh,5000);
      })();
      """;

  /**
   * The page for {@code insight}'s rows now, with the line of the relay's series without a tenant
   * label above the table.
   */
  public static String render(TenantInsight insight) {
    return render(insight, tenant -> true, true);
  }

  /**
   * The page for the rows of the tenants {@code visible} accepts: what a reader limited to some
   * tenants may see (the counts it shows are of those rows; nothing about the relay's other
   * series).
   */
  public static String render(TenantInsight insight, Predicate<String> visible) {
    return render(insight, visible, false);
  }

  private static String render(
      TenantInsight insight, Predicate<String> visible, boolean relayWide) {
    List<TenantRow> rows = insight.rows().stream().filter(r -> visible.test(r.tenant())).toList();
    long now = insight.nowMillis();
    boolean queue = insight.queueMode();
    StringBuilder b = new StringBuilder(Math.min(4096 + rows.size() * 1024, 64 << 10));
    b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        .append("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">")
        .append("<title>prw-relay tenants</title><style>")
        .append(STYLE)
        .append("</style></head><body><h1>Tenants</h1><p class=\"meta\">")
        .append(rows.size())
        .append(" tenants tracked (at most ")
        .append(insight.maxTenants())
        .append("), active series over the last ")
        .append(duration(insight.windowSeconds()))
        .append(
            "; top metrics by share of the active series (and of the traffic), from one series in ")
        .append(1 << SeriesDigests.NAME_SAMPLE_BITS)
        .append("; updated ")
        .append(Escape.html(Instant.ofEpochMilli(now).toString()))
        .append(", refreshes every 5 s");
    int note = b.length();
    b.append("</p>");
    if (relayWide) {
      unlabelled(b, insight.unlabelledLastMinute());
    }
    b.append("<div class=\"wrap\"><table><thead><tr>")
        .append("<th>Tenant</th><th class=\"num\">Active series</th>")
        .append("<th class=\"num\">Growth</th><th class=\"num\">New series/s</th>")
        .append("<th class=\"num\">Series/s</th>")
        .append("<th class=\"num\">Bytes/s</th><th>Top metrics</th><th>Lane</th>");
    if (queue) {
      b.append("<th class=\"num\">Queue</th>");
    }
    if (insight.showsLimits()) {
      LimitsColumns.header(b);
    }
    b.append("<th>Last error</th></tr></thead><tbody>");
    int bytes = ResponseBound.utf8Length(b, 0, b.length());
    int shown = 0;
    for (TenantRow r : rows) {
      int start = b.length();
      row(b, r, now, queue, insight.showsLimits() ? insight.limitsOf(r.tenant()) : NO_LIMITS);
      int rowBytes = ResponseBound.utf8Length(b, start, b.length());
      if (bytes + rowBytes > ResponseBound.MAX_BYTES - ResponseBound.RESERVE) {
        b.setLength(start);
        break;
      }
      bytes += rowBytes;
      shown++;
    }
    if (shown < rows.size()) {
      b.insert(
          note,
          "; the "
              + (rows.size() - shown)
              + " with the fewest active series are not shown (the page is limited to "
              + (ResponseBound.MAX_BYTES >> 20)
              + " MiB)");
    }
    b.append("</tbody></table></div>");
    if (rows.isEmpty()) {
      b.append("<p class=\"small\">No tenant has sent series yet.</p>");
    }
    b.append("<script>").append(SCRIPT).append("</script></body></html>\n");
    return b.toString();
  }

  /**
   * The line of the series that carried none of the tenant labels in the last minute, and where
   * they went ({@link UnlabelledSeries}).
   */
  static void unlabelled(StringBuilder b, UnlabelledSeries.Figures f) {
    b.append("<p class=\"unlabelled\">Series without a tenant label (")
        .append(Escape.html(f.labels()))
        .append(") in the last minute: ");
    if (f.total() == 0) {
      b.append("none</p>");
      return;
    }
    b.append("<b>")
        .append(String.format(Locale.ROOT, "%,d", f.total()))
        .append("</b> — ")
        .append(String.format(Locale.ROOT, "%,d", f.defaultTenant()))
        .append(" to the default tenant <span class=\"metric\">")
        .append(Escape.html(f.defaultTenantId()))
        .append("</span>, ")
        .append(String.format(Locale.ROOT, "%,d", f.dropped()))
        .append(" dropped, ")
        .append(String.format(Locale.ROOT, "%,d", f.rejected()))
        .append(" in requests answered 400</p>");
  }

  /** {@link #row}'s {@code limits} when the page has no limits column. */
  private static final TenantLimits.Usage NO_LIMITS =
      new TenantLimits.Usage(-1, 0, 0, 0, java.util.List.of());

  /**
   * @param limits the tenant's limits for the limits column, {@code null} for a tenant without any,
   *     {@link #NO_LIMITS} when the page has no such column
   */
  private static void row(
      StringBuilder b, TenantRow r, long now, boolean queue, TenantLimits.Usage limits) {
    TenantWindow.Snapshot w = r.window();
    String tenant = Escape.html(r.tenant());
    b.append("<tr data-tenant=\"")
        .append(tenant)
        .append("\"><td class=\"tenant\" data-label=\"Tenant\">")
        .append(tenant)
        .append("</td><td class=\"num active\" data-label=\"Active series\" data-v=\"")
        .append(w.activeSeries())
        .append("\">")
        .append(String.format(Locale.ROOT, "%,d", w.activeSeries()))
        .append(spark(w))
        .append("</td>");
    double growth = r.growth();
    b.append("<td class=\"num growth\" data-label=\"Growth\" data-v=\"")
        .append(Double.isNaN(growth) ? "0" : TenantsJson.number(growth))
        .append("\">");
    if (Double.isNaN(growth)) {
      b.append("<span class=\"small\">—</span>");
    } else {
      b.append(String.format(Locale.ROOT, "×%.2f", growth));
    }
    b.append("</td>");
    churn(b, r);
    b.append("<td class=\"num\" data-label=\"Series/s\" data-v=\"")
        .append(TenantsJson.number(w.seriesPerSecond()))
        .append("\">")
        .append(String.format(Locale.ROOT, "%,.1f", w.seriesPerSecond()))
        .append("</td><td class=\"num\" data-label=\"Bytes/s\" data-v=\"")
        .append(TenantsJson.number(w.bytesPerSecond()))
        .append("\">")
        .append(bytes(w.bytesPerSecond()))
        .append("/s</td><td class=\"metrics\" data-label=\"Top metrics\">");
    List<TenantWindow.TopMetric> top = w.topMetrics();
    for (int i = 0; i < Math.min(3, top.size()); i++) {
      if (i > 0) {
        b.append("<br>");
      }
      TenantWindow.TopMetric m = top.get(i);
      b.append("<span class=\"metric\">")
          .append(Escape.html(m.name()))
          .append("</span> <span class=\"share\" title=\"share of the active series\">")
          .append(percent(m.share()))
          .append(" of series</span> <span class=\"small\" title=\"share of the series routed\">")
          .append(percent(m.trafficShare()))
          .append(" of traffic</span>");
      if (m.newSeriesPerSecond() > 0) {
        b.append(" <span class=\"")
            .append(r.exploding() ? "new up" : "new")
            .append("\">+")
            .append(rate(m.newSeriesPerSecond()))
            .append("/s</span>");
      }
    }
    if (top.isEmpty()) {
      b.append("<span class=\"small\">—</span>");
    }
    String state = r.laneState();
    b.append("</td><td class=\"lane\" data-label=\"Lane\"><span class=\"")
        .append(state)
        .append("\">")
        .append(state.replace('_', ' '))
        .append("</span>");
    if (r.lane() != null) {
      b.append("<br><span class=\"small\">for ")
          .append(duration(Math.max(0, now - r.lane().sinceMillis()) / 1000))
          .append("</span>");
      if (r.lane().reason() != null) {
        b.append("<br><span class=\"small\">")
            .append(Escape.html(r.lane().reason()))
            .append("</span>");
      }
    }
    b.append("</td>");
    if (queue) {
      b.append("<td class=\"num\" data-label=\"Queue\" data-v=\"")
          .append(r.queueBytes())
          .append("\">")
          .append(bytes(r.queueBytes()));
      if (r.oldestQueuedMillis() >= 0) {
        b.append("<br><span class=\"small\">oldest ")
            .append(duration(Math.max(0, now - r.oldestQueuedMillis()) / 1000))
            .append("</span>");
      }
      b.append("</td>");
    }
    if (limits != NO_LIMITS) {
      LimitsColumns.cell(b, limits);
    }
    b.append("<td class=\"error\" data-label=\"Last error\">");
    if (r.lastError() == null) {
      b.append("<span class=\"small\">—</span>");
    } else {
      b.append(Escape.html(r.lastError().message()))
          .append("<br><span class=\"small\">")
          .append(duration(Math.max(0, now - r.lastError().atMillis()) / 1000))
          .append(" ago</span>");
    }
    b.append("</td></tr>");
  }

  /**
   * The new series per second, marked when the tenant is {@link TenantRow#exploding} (the rule of
   * the alert); {@code —} until the tenant has been tracked for a whole bucket.
   */
  private static void churn(StringBuilder b, TenantRow r) {
    double rate = r.newSeriesPerSecond();
    b.append("<td class=\"num churn\" data-label=\"New series/s\" data-v=\"")
        .append(Double.isNaN(rate) ? "0" : TenantsJson.number(rate))
        .append("\">");
    if (Double.isNaN(rate)) {
      b.append("<span class=\"small\" title=\"known once the tenant has been tracked for a tenth")
          .append(" of the window\">—</span>");
    } else {
      b.append(r.exploding() ? "<span class=\"up\" title=\"exploding\">" : "<span>")
          .append(rate(rate))
          .append("</span>");
    }
    b.append("</td>");
  }

  /**
   * A share as a percentage: whole percents, one decimal below 10 %, {@code &lt;0.1%} below that
   * (HTML).
   */
  static String percent(double share) {
    double p = share * 100;
    if (p >= 10 || p == 0) {
      return String.format(Locale.ROOT, "%.0f%%", p);
    }
    return p < 0.1 ? "&lt;0.1%" : String.format(Locale.ROOT, "%.1f%%", p);
  }

  /** A rate per second: whole numbers from 10 on, one decimal below. */
  static String rate(double v) {
    return v >= 10 ? String.format(Locale.ROOT, "%,.0f", v) : String.format(Locale.ROOT, "%.1f", v);
  }

  /** The window's estimate at the start of each bucket, then now, as a small inline SVG. */
  private static String spark(TenantWindow.Snapshot w) {
    double[] h = w.history();
    double max = w.activeSeries();
    int known = 0;
    for (double v : h) {
      if (!Double.isNaN(v)) {
        max = Math.max(max, v);
        known++;
      }
    }
    if (known == 0 || max <= 0) {
      return "";
    }
    int width = 60;
    int height = 16;
    StringBuilder p = new StringBuilder();
    int n = h.length + 1;
    for (int i = 0; i < n; i++) {
      double v = i < h.length ? h[i] : w.activeSeries();
      if (Double.isNaN(v)) {
        continue;
      }
      p.append(p.length() == 0 ? "" : " ")
          .append(
              String.format(
                  Locale.ROOT,
                  "%.1f,%.1f",
                  i * (width - 2.0) / (n - 1) + 1,
                  height - 1 - v / max * (height - 2)));
    }
    return "<svg class=\"spark\" width=\""
        + width
        + "\" height=\""
        + height
        + "\" viewBox=\"0 0 "
        + width
        + " "
        + height
        + "\" aria-hidden=\"true\"><polyline fill=\"none\" stroke=\"currentColor\""
        + " stroke-width=\"1.5\" points=\""
        + p
        + "\"/></svg>";
  }

  static String duration(long seconds) {
    if (seconds < 60) {
      return seconds + "s";
    }
    if (seconds < 3600) {
      return seconds / 60 + "m" + (seconds % 60 == 0 ? "" : " " + seconds % 60 + "s");
    }
    return seconds / 3600 + "h" + (seconds % 3600 / 60 == 0 ? "" : " " + seconds % 3600 / 60 + "m");
  }

  static String bytes(double v) {
    if (v < 1024) {
      return String.format(Locale.ROOT, "%.0f B", v);
    }
    if (v < 1024 * 1024) {
      return String.format(Locale.ROOT, "%.1f KiB", v / 1024);
    }
    if (v < 1024.0 * 1024 * 1024) {
      return String.format(Locale.ROOT, "%.1f MiB", v / 1024 / 1024);
    }
    return String.format(Locale.ROOT, "%.1f GiB", v / 1024 / 1024 / 1024);
  }
}
