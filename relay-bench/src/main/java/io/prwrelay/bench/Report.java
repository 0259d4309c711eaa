package io.prwrelay.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs the JMH suite with the GC profiler and prints the markdown tables of BENCHMARKS.md: time per
 * operation, MB/s and series/s of decompressed payload, bytes allocated per operation, and each
 * contender's speed-up over the baseline measured in the same run.
 *
 * <pre>
 * java -cp relay-bench/target/benchmarks.jar io.prwrelay.bench.Report [--quick] [payload ...] &gt; tables.md
 * </pre>
 *
 * The tables, and nothing else, go to standard output; JMH's progress log goes to standard error,
 * so that its lines (blank ones included) never end up between the tables. Run from the repository
 * root so {@code file:../shared/testdata/...} payloads resolve.
 */
public final class Report {
  private Report() {}

  public static void main(String[] args) throws Exception {
    boolean quick = false;
    List<String> payloads = new ArrayList<>();
    for (String a : args) {
      if (a.equals("--quick")) {
        quick = true;
      } else {
        payloads.add(a);
      }
    }
    if (payloads.isEmpty()) {
      payloads.add(Payloads.REAL);
      payloads.addAll(Payloads.SHAPES);
    }
    ChainedOptionsBuilder route =
        options(quick)
            .include(RouteBenchmark.class.getSimpleName())
            .param("payload", payloads.toArray(new String[0]));
    print("Route step: decompressed bytes → per-tenant batches", run(route), "route", "baseline");
    ChainedOptionsBuilder pipeline =
        options(quick)
            .include(PipelineBenchmark.class.getSimpleName())
            .param("payload", Payloads.REAL, "batch-2000x10", "single-2000");
    print(
        "Whole request: snappy decode + route + snappy encode per tenant",
        run(pipeline),
        "relay",
        "baseline");
    ChainedOptionsBuilder codec = options(quick).include(CodecBenchmark.class.getSimpleName());
    print("Floor: codecs and one copy of the payload", run(codec), null, null);
  }

  /** Runs the benchmarks of {@code options}, logging JMH's progress to standard error. */
  private static Collection<RunResult> run(ChainedOptionsBuilder options) throws RunnerException {
    OutputFormat log = OutputFormatFactory.createFormatInstance(System.err, VerboseMode.NORMAL);
    return new Runner(options.build(), log).run();
  }

  private static ChainedOptionsBuilder options(boolean quick) {
    ChainedOptionsBuilder b =
        new OptionsBuilder().addProfiler(GCProfiler.class).shouldFailOnError(true);
    if (quick) {
      b.warmupIterations(3)
          .warmupTime(TimeValue.seconds(1))
          .measurementIterations(3)
          .measurementTime(TimeValue.seconds(1));
    }
    return b;
  }

  /**
   * One row of a table.
   *
   * @param bytes decompressed size of the payload
   * @param allocatedBytes bytes allocated per operation, NaN when not measured
   * @param speedup the baseline's time over this row's, NaN when not compared
   */
  record Row(
      String payload,
      int bytes,
      int series,
      String benchmark,
      double microseconds,
      double error,
      double allocatedBytes,
      double speedup) {}

  private static void print(
      String title, Collection<RunResult> results, String contender, String baseline) {
    Map<String, Map<String, RunResult>> byPayload = new LinkedHashMap<>();
    for (RunResult r : results) {
      BenchmarkParams p = r.getParams();
      String method = p.getBenchmark().substring(p.getBenchmark().lastIndexOf('.') + 1);
      byPayload.computeIfAbsent(p.getParam("payload"), k -> new LinkedHashMap<>()).put(method, r);
    }
    List<Row> rows = new ArrayList<>();
    for (Map.Entry<String, Map<String, RunResult>> e : byPayload.entrySet()) {
      byte[] bytes = Payloads.load(e.getKey(), "instance");
      int series = Payloads.seriesCount(bytes);
      RunResult base = baseline == null ? null : e.getValue().get(baseline);
      for (Map.Entry<String, RunResult> m : e.getValue().entrySet()) {
        Result<?> primary = m.getValue().getPrimaryResult();
        Result<?> alloc = m.getValue().getSecondaryResults().get("gc.alloc.rate.norm");
        rows.add(
            new Row(
                e.getKey().replace("file:../shared/testdata/", ""),
                bytes.length,
                series,
                m.getKey(),
                primary.getScore(),
                primary.getScoreError(),
                alloc == null ? Double.NaN : alloc.getScore(),
                base != null && m.getKey().equals(contender)
                    ? base.getPrimaryResult().getScore() / primary.getScore()
                    : Double.NaN));
      }
    }
    System.out.print(table(title, rows));
    System.out.flush();
  }

  /** The markdown of one table: a blank line, its heading, a blank line, then its rows. */
  static String table(String title, List<Row> rows) {
    StringBuilder out =
        new StringBuilder()
            .append("\n### ")
            .append(title)
            .append("\n\n")
            .append("| payload | benchmark | µs/op | ± | MB/s | series/s | B/op | vs baseline |\n")
            .append("|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (Row r : rows) {
      out.append(
          String.format(
              Locale.ROOT,
              "| %s (%.2f MB, %d series) | %s | %.1f | %.1f | %.0f | %.2fM | %s | %s |\n",
              r.payload(),
              r.bytes() / 1e6,
              r.series(),
              r.benchmark(),
              r.microseconds(),
              r.error(),
              r.bytes() / r.microseconds(),
              r.series() / r.microseconds(),
              Double.isNaN(r.allocatedBytes())
                  ? "?"
                  : String.format(Locale.ROOT, "%.0f", r.allocatedBytes()),
              Double.isNaN(r.speedup()) ? "" : String.format(Locale.ROOT, "%.1f×", r.speedup())));
    }
    return out.toString();
  }
}
