package io.prwrelay.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The JMH rows the targets compare, run back to back in rounds (route, its baseline and the
 * copy floor; the whole request and its codec floor) and timed by the running thread's CPU time
 * rather than the wall clock. On a machine shared with other builds the wall clock measures the
 * neighbours: a thread that is not scheduled accrues no CPU time, and alternating the rows every
 * round exposes them to the same conditions, so the ratios hold where JMH's absolute numbers do
 * not. {@code rows}, a regular expression over the row names, keeps only the rows it matches. Not a
 * replacement for JMH on a quiet machine: garbage collection and JIT compilation run on other
 * threads and are not counted (which flatters the allocating protobuf-java baseline).
 *
 * <pre>
 * java [-DtenantLabel=NAME] -cp relay-bench/target/benchmarks.jar io.prwrelay.bench.Interleaved \
 *      [payload] [rounds] [rows]
 * </pre>
 *
 * <p>{@code tenantLabel} (default {@code instance}, the real payload's) names the tenant label; the
 * load generator's series carry {@code service_id}, sorted last of their eight labels.
 */
public final class Interleaved {
  private Interleaved() {}

  public static void main(String[] args) throws Exception {
    String payload = args.length > 0 ? args[0] : Payloads.REAL;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    String tenantLabel = System.getProperty("tenantLabel", "instance");
    RouteBenchmark route = new RouteBenchmark();
    route.payload = payload;
    route.tenantLabel = tenantLabel;
    route.setUp();
    PipelineBenchmark pipeline = new PipelineBenchmark();
    pipeline.payload = payload;
    pipeline.tenantLabel = tenantLabel;
    pipeline.setUp();
    CodecBenchmark codec = new CodecBenchmark();
    codec.payload = payload;
    codec.tenantLabel = tenantLabel;
    codec.setUp();
    SketchBenchmark sketch = new SketchBenchmark();
    sketch.setUp();
    Blackhole bh =
        new Blackhole(
            "Today's password is swordfish. I understand instantiating Blackholes directly is"
                + " dangerous.");
    Map<String, Callable<Object>> rows = new LinkedHashMap<>();
    rows.put("RouteBenchmark.route", route::route);
    rows.put("RouteBenchmark.routeReadingHaKeys", route::routeReadingHaKeys);
    rows.put("RouteBenchmark.routeWithoutFamilies", route::routeWithoutFamilies);
    rows.put("RouteBenchmark.routeCountingSamples", route::routeCountingSamples);
    rows.put("RouteBenchmark.routeDigesting", route::routeDigesting);
    rows.put("RouteBenchmark.routeDigestingLimited", route::routeDigestingLimited);
    rows.put("RouteBenchmark.routeLimited", route::routeLimited);
    rows.put("RouteBenchmark.routeV2", route::routeV2);
    rows.put("RouteBenchmark.routeV2Digesting", route::routeV2Digesting);
    rows.put("RouteBenchmark.routeV2DigestingLimited", route::routeV2DigestingLimited);
    rows.put("RouteBenchmark.scan", route::scan);
    rows.put("RouteBenchmark.scanCountingSamples", route::scanCountingSamples);
    rows.put("RouteBenchmark.labelWalk", route::labelWalk);
    rows.put("RouteBenchmark.labelWalkValidated", route::labelWalkValidated);
    rows.put("RouteBenchmark.labelSetHash", route::labelSetHash);
    rows.put("RouteBenchmark.copy", route::copy);
    rows.put("RouteBenchmark.baseline", () -> route.baseline(bh));
    rows.put("PipelineBenchmark.relay", pipeline::relay);
    rows.put("PipelineBenchmark.relayInsightOff", pipeline::relayInsightOff);
    rows.put("PipelineBenchmark.relayRecorded", pipeline::relayRecorded);
    rows.put("PipelineBenchmark.relayWithoutFamilies", pipeline::relayWithoutFamilies);
    rows.put("PipelineBenchmark.floor", pipeline::floor);
    rows.put("CodecBenchmark.snappyDecode", codec::snappyDecode);
    rows.put("SketchBenchmark.dataSketchesHll4", sketch::dataSketchesHll4);
    rows.put("SketchBenchmark.dataSketchesHll8", sketch::dataSketchesHll8);
    rows.put("SketchBenchmark.hyperLogLog", sketch::hyperLogLog);
    if (args.length > 2) {
      rows.keySet().removeIf(k -> !k.matches(args[2]));
    }
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    Map<String, List<Double>> perRound = new LinkedHashMap<>();
    for (int round = -5; round < rounds; round++) {
      for (Map.Entry<String, Callable<Object>> row : rows.entrySet()) {
        double micros = cpuMicrosPerOp(threads, row.getValue(), bh);
        if (round >= 0) {
          perRound.computeIfAbsent(row.getKey(), k -> new ArrayList<>()).add(micros);
        }
      }
    }
    route.tearDown();
    pipeline.tearDown();
    codec.tearDown();
    Map<String, Double> median = new LinkedHashMap<>();
    System.out.println("| benchmark | CPU µs/op, median | min | max |");
    System.out.println("|---|---:|---:|---:|");
    for (Map.Entry<String, List<Double>> e : perRound.entrySet()) {
      double[] v = e.getValue().stream().mapToDouble(Double::doubleValue).sorted().toArray();
      median.put(e.getKey(), v[v.length / 2]);
      System.out.printf(
          Locale.ROOT,
          "| %s | %.1f | %.1f | %.1f |%n",
          e.getKey(),
          v[v.length / 2],
          v[0],
          v[v.length - 1]);
    }
    System.out.println();
    ratio(median, "RouteBenchmark.baseline", "RouteBenchmark.route", "baseline / route");
    ratio(median, "RouteBenchmark.route", "RouteBenchmark.copy", "route / copy");
    ratio(
        median,
        "RouteBenchmark.route",
        "RouteBenchmark.labelWalkValidated",
        "route / labelWalkValidated");
    if (median.containsKey("RouteBenchmark.labelWalkValidated")
        && median.containsKey("RouteBenchmark.labelSetHash")) {
      median.put(
          "floor with the insight",
          median.get("RouteBenchmark.labelWalkValidated")
              + median.get("RouteBenchmark.labelSetHash"));
      ratio(
          median,
          "RouteBenchmark.routeDigesting",
          "floor with the insight",
          "routeDigesting / (labelWalkValidated + labelSetHash)");
    }
    ratio(
        median,
        "RouteBenchmark.route",
        "RouteBenchmark.routeWithoutFamilies",
        "route / routeWithoutFamilies");
    ratio(
        median,
        "RouteBenchmark.routeCountingSamples",
        "RouteBenchmark.route",
        "routeCountingSamples / route");
    ratio(
        median, "RouteBenchmark.routeDigesting", "RouteBenchmark.route", "routeDigesting / route");
    ratio(
        median,
        "RouteBenchmark.routeV2Digesting",
        "RouteBenchmark.routeV2",
        "routeV2Digesting / routeV2");
    ratio(median, "PipelineBenchmark.relay", "PipelineBenchmark.floor", "relay / floor");
    ratio(
        median,
        "PipelineBenchmark.relayInsightOff",
        "PipelineBenchmark.floor",
        "relayInsightOff / floor");
    ratio(
        median,
        "PipelineBenchmark.relay",
        "PipelineBenchmark.relayWithoutFamilies",
        "relay / relayWithoutFamilies");
    ratio(
        median,
        "PipelineBenchmark.relay",
        "PipelineBenchmark.relayInsightOff",
        "relay / relayInsightOff");
    ratio(
        median,
        "PipelineBenchmark.relayRecorded",
        "PipelineBenchmark.relayInsightOff",
        "relayRecorded / relayInsightOff");
  }

  private static void ratio(Map<String, Double> median, String a, String b, String name) {
    if (!median.containsKey(a) || !median.containsKey(b)) {
      return;
    }
    System.out.printf(Locale.ROOT, "%s = %.2f%n", name, median.get(a) / median.get(b));
  }

  /** Runs {@code op} for about 200 ms of this thread's CPU time; returns CPU µs per call. */
  private static double cpuMicrosPerOp(ThreadMXBean threads, Callable<Object> op, Blackhole bh)
      throws Exception {
    long budget = 200_000_000L;
    long start = threads.getCurrentThreadCpuTime();
    long used;
    int calls = 0;
    do {
      bh.consume(op.call());
      calls++;
      used = threads.getCurrentThreadCpuTime() - start;
    } while (used < budget);
    return used / 1000.0 / calls;
  }
}
