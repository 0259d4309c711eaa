package io.prwrelay.bench.load;

import io.prwrelay.bench.svg.BarChart;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code --sweep-tenants 1,10,100,1000}: one whole run ({@link LoadGenerator#run(Options,
 * PrintStream)}, a fresh relay each) per tenant count, every other option unchanged, then a table
 * of series/s against the tenants each request carries and, with {@code --chart}, the same as an
 * SVG bar chart.
 */
final class TenantSweep {
  /** One run of the sweep. */
  record Point(int tenants, Summary summary) {}

  private TenantSweep() {}

  /**
   * Runs the sweep; true when every run was OK.
   *
   * @throws IOException when a run cannot be set up or the chart cannot be written
   */
  static boolean run(Options options, PrintStream out) throws IOException, InterruptedException {
    String loadBefore = loadAverage();
    List<Point> points = new ArrayList<>();
    for (int tenants : options.sweepTenants()) {
      out.printf("%n== sweep: --tenants %d ==%n", tenants);
      points.add(new Point(tenants, LoadGenerator.run(options.withTenants(tenants), out)));
    }
    String loadAfter = loadAverage();
    out.printf(
        "%n== sweep (%d series/request, %d connections, %s; load average %s before, %s after)"
            + " ==%n",
        options.seriesPerRequest(),
        options.connections(),
        options.rate() == 0 ? "max rate" : "rate " + options.rate() + "/s",
        loadBefore,
        loadAfter);
    out.printf(
        "%10s %20s %14s %10s %26s  %s%n",
        "tenants",
        "tenants per request",
        "series/s",
        "p99 ms",
        "relay CPU-s per M series",
        "result");
    boolean ok = true;
    for (Point p : points) {
      Summary s = p.summary();
      ok &= s.ok();
      out.printf(
          Locale.ROOT,
          "%10d %20.1f %,14.0f %10.2f %26s  %s%n",
          p.tenants(),
          s.tenantsPerRequest(),
          s.seriesPerSecond(),
          s.latency().p99(),
          s.relayCpuPerMillionSeries().isPresent()
              ? String.format(Locale.ROOT, "%.3f", s.relayCpuPerMillionSeries().getAsDouble())
              : "-",
          s.ok() ? "OK" : "FAILED");
    }
    if (options.chart() != null) {
      Path chart = options.chart();
      Files.writeString(
          chart, chart(options, points, loadBefore, loadAfter), StandardCharsets.UTF_8);
      out.println("chart: " + chart);
    }
    return ok;
  }

  /** The SVG bar chart of series/s per tenant count. */
  static String chart(Options options, List<Point> points, String loadBefore, String loadAfter) {
    BarChart chart =
        new BarChart(
            "prw-relay: series/s against tenants per request",
            String.format(
                Locale.ROOT,
                "%,d series per request, %d connections, %s, relay + sender + sink on %d CPUs;"
                    + " load average %s → %s",
                options.seriesPerRequest(),
                options.connections(),
                options.rate() == 0 ? "max rate" : "rate " + options.rate() + "/s",
                Runtime.getRuntime().availableProcessors(),
                loadBefore,
                loadAfter),
            "--tenants (tenants per request, average)",
            "series/s accepted");
    for (Point p : points) {
      chart.add(
          new BarChart.Bar(
              String.format(Locale.ROOT, "%,d", p.tenants()),
              String.format(Locale.ROOT, "(%.1f)", p.summary().tenantsPerRequest()),
              p.summary().seriesPerSecond()));
    }
    return chart.toSvg();
  }

  /** The 1-minute load average, or "?" off Linux. */
  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg"), StandardCharsets.US_ASCII).split(" ")[0];
    } catch (IOException | RuntimeException e) {
      return "?";
    }
  }
}
