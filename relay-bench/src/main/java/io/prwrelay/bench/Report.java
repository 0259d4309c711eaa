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
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the JMH suite with the GC profiler and prints the markdown tables of BENCHMARKS.md: time per
 * operation, MB/s and series/s of decompressed payload, bytes allocated per operation, and each
 * contender's speed-up over the baseline measured in the same run.
 *
 * <pre>
 * java -cp relay-bench/target/benchmarks.jar io.prwrelay.bench.Report [--quick] [payload ...]
 * </pre>
 *
 * Run from the repository root so {@code file:../shared/testdata/...} payloads resolve.
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
    print(
        "Route step: decompressed bytes → per-tenant batches",
        new Runner(route.build()).run(),
        "route",
        "baseline");
    ChainedOptionsBuilder pipeline =
        options(quick)
            .include(PipelineBenchmark.class.getSimpleName())
            .param("payload", Payloads.REAL, "batch-2000x10");
    print(
        "Whole request: snappy decode + route + snappy encode per tenant",
        new Runner(pipeline.build()).run(),
        "relay",
        "baseline");
    ChainedOptionsBuilder codec = options(quick).include(CodecBenchmark.class.getSimpleName());
    print("Floor: codecs and one copy of the payload", new Runner(codec.build()).run(), null, null);
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

  private static void print(
      String title, Collection<RunResult> results, String contender, String baseline) {
    Map<String, Map<String, RunResult>> byPayload = new LinkedHashMap<>();
    for (RunResult r : results) {
      BenchmarkParams p = r.getParams();
      String method = p.getBenchmark().substring(p.getBenchmark().lastIndexOf('.') + 1);
      byPayload.computeIfAbsent(p.getParam("payload"), k -> new LinkedHashMap<>()).put(method, r);
    }
    System.out.println();
    System.out.println("### " + title);
    System.out.println();
    System.out.println(
        "| payload | benchmark | µs/op | ± | MB/s | series/s | B/op | vs baseline |");
    System.out.println("|---|---|---:|---:|---:|---:|---:|---:|");
    for (Map.Entry<String, Map<String, RunResult>> e : byPayload.entrySet()) {
      String payload = e.getKey();
      byte[] bytes = Payloads.load(payload, "instance");
      int series = Payloads.seriesCount(bytes);
      Result<?> base =
          baseline == null || !e.getValue().containsKey(baseline)
              ? null
              : e.getValue().get(baseline).getPrimaryResult();
      for (Map.Entry<String, RunResult> m : e.getValue().entrySet()) {
        Result<?> primary = m.getValue().getPrimaryResult();
        double us = primary.getScore();
        Result<?> alloc = m.getValue().getSecondaryResults().get("gc.alloc.rate.norm");
        String ratio =
            base != null && m.getKey().equals(contender)
                ? String.format(Locale.ROOT, "%.1f×", base.getScore() / us)
                : "";
        System.out.printf(
            Locale.ROOT,
            "| %s (%.2f MB, %d series) | %s | %.1f | %.1f | %.0f | %.2fM | %s | %s |%n",
            payload.replace("file:../shared/testdata/", ""),
            bytes.length / 1e6,
            series,
            m.getKey(),
            us,
            primary.getScoreError(),
            bytes.length / us,
            series / us,
            alloc == null ? "?" : String.format(Locale.ROOT, "%.0f", alloc.getScore()),
            ratio);
      }
    }
  }
}
