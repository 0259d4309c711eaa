package io.prwrelay.bench.load;

import java.io.PrintStream;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;

/**
 * The outcome of one load run: throughput and latency of the measured phase (with a bad tenant,
 * apart for the requests with and without it), every answer, retry and error of the whole run, the
 * per-tenant comparison of series sent and received, and, for a spawned relay, its CPU time, GC
 * pauses, a few of its own counters and its exit code. {@link #ok()} decides the exit code.
 */
public final class Summary {
  /**
   * One tenant's series over the whole run.
   *
   * @param tenant the tenant ID
   * @param sent series that must have arrived exactly once (see {@link RunStats})
   * @param unconfirmed series in requests that failed (the relay may have delivered some of them)
   * @param received series the sink received
   * @param receivedBytes uncompressed bytes the sink received
   * @param expected whether the generator sent series for this tenant at all
   * @param bad whether this is the bad tenant, whose series are not checked
   */
  public record Tenant(
      String tenant,
      long sent,
      long unconfirmed,
      long received,
      long receivedBytes,
      boolean expected,
      boolean bad) {
    /**
     * Received exactly the series sent, plus at most the series of failed requests; always true for
     * the bad tenant.
     */
    public boolean matches() {
      return bad || (expected && received >= sent && received <= sent + unconfirmed);
    }
  }

  /**
   * Latency percentiles of a set of answers, in milliseconds.
   *
   * @param count answers measured
   */
  public record Latency(long count, double p50, double p90, double p99, double max) {
    static final Latency NONE = new Latency(0, 0, 0, 0, 0);

    static Latency of(Histogram h) {
      return new Latency(
          h.getTotalCount(),
          h.getValueAtPercentile(50) / 1e6,
          h.getValueAtPercentile(90) / 1e6,
          h.getValueAtPercentile(99) / 1e6,
          h.getMaxValue() / 1e6);
    }

    String describe() {
      return count == 0
          ? "no measured answers"
          : String.format(
              "p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms (%,d answers)",
              p50, p90, p99, max, count);
    }
  }

  /**
   * The spawned relay's figures.
   *
   * @param pid process ID
   * @param measuredCpu CPU time used in the measured window
   * @param totalCpu CPU time of the whole process, read before SIGTERM
   * @param measuredAllocated heap bytes its threads allocated in the measured window (empty when
   *     they could not be read)
   * @param allocationProblem why {@code measuredAllocated} is empty
   * @param memory resident memory, read before SIGTERM
   * @param gc GC pauses over the relay's whole life
   * @param gcLog the GC log file
   * @param exitCode exit code after SIGTERM, -1 when it had to be killed
   * @param diedDuringRun whether it exited before the run was over
   * @param lastLines its last output lines, shown when something went wrong
   */
  public record Relay(
      long pid,
      Optional<Duration> measuredCpu,
      Optional<Duration> totalCpu,
      OptionalLong measuredAllocated,
      String allocationProblem,
      Optional<ResidentMemory> memory,
      GcPauses gc,
      String gcLog,
      int exitCode,
      boolean diedDuringRun,
      List<String> lastLines) {}

  /** Tenants listed one per line; with more, only mismatches are listed. */
  private static final int LISTED_TENANTS = 30;

  double measuredSeconds;
  double warmupSeconds;
  double targetRate;
  int connections;
  long acceptedRequests;
  long failedRequests;
  long series;
  long compressedBytes;
  long uncompressedBytes;
  Latency latency = Latency.NONE;
  Latency latencyBad = Latency.NONE;
  BadTenant badTenant;
  int retries;
  Map<Integer, Long> statusesPlain = Map.of();
  Map<Integer, Long> statusesBad = Map.of();
  Map<Integer, Long> retried = Map.of();
  long givenUp;
  long abandoned;
  Map<String, Double> relayMetrics = Map.of();
  Map<String, Long> transportErrors = Map.of();
  Map<String, String> errorSamples = Map.of();
  long sinkErrors;
  String sinkFirstError;
  String sinkUrl;
  String tenantLabel;
  List<Tenant> tenants = List.of();
  Relay relay;
  Optional<Duration> generatorCpu = Optional.empty();
  CodecFloor floor;
  double tenantsPerRequest;
  int cpus;
  String abortReason;

  Summary() {}

  /** Requests answered 2xx in the measured phase. */
  public long acceptedRequests() {
    return acceptedRequests;
  }

  /** Series per second of the measured phase. */
  public double seriesPerSecond() {
    return rateValue(series);
  }

  /** Distinct tenants per generated body, on average. */
  public double tenantsPerRequest() {
    return tenantsPerRequest;
  }

  /** The spawned relay's CPU seconds per million series in the measured phase, when known. */
  public OptionalDouble relayCpuPerMillionSeries() {
    return relay == null || relay.measuredCpu().isEmpty() || series == 0
        ? OptionalDouble.empty()
        : OptionalDouble.of(relay.measuredCpu().get().toNanos() / 1e9 / (series / 1e6));
  }

  /** Series in requests answered 2xx in the measured phase. */
  public long series() {
    return series;
  }

  /** Attempts of the whole run answered non-2xx or not answered, plus bodies the sink refused. */
  public long errors() {
    return errorsWithoutBad() + notAccepted(statusesBad);
  }

  /**
   * Attempts of the whole run without the bad tenant answered non-2xx, attempts not answered, and
   * bodies the sink refused: what must be zero even when a bad tenant misbehaves.
   */
  public long errorsWithoutBad() {
    long n = sinkErrors + notAccepted(statusesPlain);
    for (long v : transportErrors.values()) {
      n += v;
    }
    return n;
  }

  private static long notAccepted(Map<Integer, Long> statuses) {
    long n = 0;
    for (Map.Entry<Integer, Long> e : statuses.entrySet()) {
      if (e.getKey() / 100 != 2) {
        n += e.getValue();
      }
    }
    return n;
  }

  /** Answers of the whole run by HTTP status, with and without the bad tenant. */
  public Map<Integer, Long> statuses() {
    Map<Integer, Long> all = new TreeMap<>(statusesPlain);
    statusesBad.forEach((k, v) -> all.merge(k, v, Long::sum));
    return all;
  }

  /** Answers of the whole run to requests without the bad tenant, by HTTP status. */
  public Map<Integer, Long> statusesWithoutBad() {
    return statusesPlain;
  }

  /** Answers of the whole run to requests that carry the bad tenant, by HTTP status. */
  public Map<Integer, Long> statusesWithBad() {
    return statusesBad;
  }

  /** Latency of the measured requests without the bad tenant (all of them without one). */
  public Latency latency() {
    return latency;
  }

  /** Latency of the measured requests that carry the bad tenant. */
  public Latency latencyWithBad() {
    return latencyBad;
  }

  /** Retries scheduled, by the status of the answer that made them necessary. */
  public Map<Integer, Long> retried() {
    return retried;
  }

  /** The relay's counters read at the end ({@link RelayMetricsScrape#NAMES}), when it has them. */
  public Map<String, Double> relayMetrics() {
    return relayMetrics;
  }

  /** Per-tenant comparison, generated tenants first, then any the sink saw unexpectedly. */
  public List<Tenant> tenants() {
    return tenants;
  }

  /** Series that must have arrived, by tenant, the bad tenant left out. */
  public Map<String, Long> sentPerTenant() {
    Map<String, Long> m = new LinkedHashMap<>();
    tenants.stream()
        .filter(t -> t.expected() && !t.bad())
        .forEach(t -> m.put(t.tenant(), t.sent()));
    return m;
  }

  /**
   * Series the sink received, by tenant (only tenants that received any), the bad tenant left out.
   */
  public Map<String, Long> receivedPerTenant() {
    Map<String, Long> m = new LinkedHashMap<>();
    tenants.stream()
        .filter(t -> t.received() > 0 && !t.bad())
        .forEach(t -> m.put(t.tenant(), t.received()));
    return m;
  }

  /** Whether some tenant did not receive what was sent for it, or an unexpected tenant appeared. */
  public boolean mismatch() {
    return tenants.stream().anyMatch(t -> !t.matches());
  }

  /** The codec floor measured before the run, unless {@code --codec-floor 0s}. */
  public Optional<CodecFloor> codecFloor() {
    return Optional.ofNullable(floor);
  }

  /** The spawned relay's figures, if one was spawned. */
  public Optional<Relay> relay() {
    return Optional.ofNullable(relay);
  }

  /**
   * Success: the run completed, no request failed (with a bad tenant: no request without it, and
   * those with it only with 429 or 5xx), every tenant but the bad one received exactly its series,
   * and a spawned relay exited 0 after SIGTERM.
   */
  public boolean ok() {
    return abortReason == null
        && (badTenant == null ? errors() == 0 : errorsWithoutBad() == 0 && badAnswersRetriable())
        && !mismatch()
        && acceptedRequests > 0
        && (relay == null || (relay.exitCode() == 0 && !relay.diedDuringRun()));
  }

  /**
   * Whether every request with the bad tenant was answered 2xx, 429 or 5xx; or, with a throttled
   * bad tenant, 400: the relay's default {@code relay.delivery.throttled.policy=drop} answers a
   * request whose only failure is a throttled tenant 400 after its 429s, and the sender drops it.
   */
  private boolean badAnswersRetriable() {
    boolean throttled = badTenant != null && badTenant.kind() == BadTenant.Kind.THROTTLED;
    return statusesBad.keySet().stream()
        .allMatch(s -> s / 100 == 2 || s == 429 || s / 100 == 5 || (throttled && s == 400));
  }

  /** Prints the report. */
  public void print(PrintStream out) {
    out.println();
    out.println("== summary ==");
    row(
        out,
        "measured",
        String.format(
            "%.2f s after %.1f s of warm-up (%d connections, %s)",
            measuredSeconds,
            warmupSeconds,
            connections,
            targetRate == 0 ? "max rate" : "target " + plain(targetRate) + " requests/s"));
    row(
        out,
        "requests",
        String.format(
            "%,d accepted (%s/s), %,d not accepted (attempts, retries included)",
            acceptedRequests, rate(acceptedRequests), failedRequests));
    row(out, "series", String.format("%,d (%s/s)", series, rate(series)));
    row(
        out,
        "bytes sent",
        String.format(
            "%s MB compressed (%s MB/s), %s MB uncompressed (%s MB/s)",
            num(compressedBytes / 1e6),
            num(rateValue(compressedBytes) / 1e6),
            num(uncompressedBytes / 1e6),
            num(rateValue(uncompressedBytes) / 1e6)));
    String from = targetRate == 0 ? "from the write" : "from the scheduled send time";
    if (badTenant == null) {
      row(out, "latency", latency.describe() + (latency.count() == 0 ? "" : ", " + from));
      row(out, "answers", answers(statusesPlain) + " (whole run)");
    } else {
      row(out, "latency", "without " + BadTenant.TENANT + ": " + latency.describe());
      row(out, "", "with " + BadTenant.TENANT + ":    " + latencyBad.describe());
      row(out, "", "(each attempt " + from + ")");
      row(out, "answers", "without " + BadTenant.TENANT + ": " + answers(statusesPlain));
      row(out, "", "with " + BadTenant.TENANT + ":    " + answers(statusesBad) + " (whole run)");
    }
    long resent = retried.values().stream().mapToLong(Long::longValue).sum();
    if (resent > 0 || givenUp > 0 || abandoned > 0) {
      List<String> by = new ArrayList<>();
      retried.forEach((status, n) -> by.add(String.format("after %d: %,d", status, n)));
      row(
          out,
          "retries",
          String.format(
              "%,d scheduled (%s), %,d of them still waiting when the run ended; %,d requests"
                  + " given up (not accepted after %d retries, or not retriable)",
              resent, by.isEmpty() ? "none" : String.join(", ", by), abandoned, givenUp, retries));
    }
    List<String> transport = new ArrayList<>();
    transportErrors.forEach((kind, n) -> transport.add(String.format("%s: %,d", kind, n)));
    row(out, "transport errors", transport.isEmpty() ? "none" : String.join(", ", transport));
    String label = "first of each";
    for (Map.Entry<String, String> e : errorSamples.entrySet()) {
      String text = e.getValue().isEmpty() ? "(no body)" : e.getValue();
      row(out, label, e.getKey() + ": " + text.replaceAll("\\s+", " "));
      label = "";
    }
    if (sinkErrors > 0) {
      row(out, "sink errors", String.format("%,d, first: %s", sinkErrors, sinkFirstError));
    }
    out.println();
    out.println(
        badTenant == null
            ? "per tenant, whole run (sent = series in requests answered 2xx; MB uncompressed):"
            : "per tenant, whole run (sent = series in requests answered 2xx, and in requests with "
                + BadTenant.TENANT
                + " answered 429/5xx;\n  those must arrive exactly once; MB uncompressed):");
    out.printf("  %-24s %15s %15s %15s  %s%n", "tenant", "sent", "received", "received MB", "");
    boolean listAll = tenants.size() <= LISTED_TENANTS;
    // With many tenants only mismatches are listed, and the bad tenant.
    int listed = 0;
    long unlisted = 0;
    long unlistedMismatches = 0;
    for (Tenant t : tenants) {
      if (!listAll && ((t.matches() && !t.bad()) || listed == LISTED_TENANTS)) {
        unlisted++;
        if (!t.matches() && !t.bad()) {
          unlistedMismatches++;
        }
        continue;
      }
      listed++;
      String verdict;
      if (t.bad()) {
        verdict = "not checked (the bad tenant)";
      } else if (!t.expected()) {
        verdict = "MISMATCH: tenant never sent";
      } else if (!t.matches()) {
        verdict = "MISMATCH";
      } else if (t.received() > t.sent()) {
        verdict = String.format("ok (+%,d from failed requests)", t.received() - t.sent());
      } else {
        verdict = "ok";
      }
      out.printf(
          "  %-24s %,15d %,15d %15s  %s%n",
          t.tenant(), t.sent(), t.received(), num(t.receivedBytes() / 1e6), verdict);
    }
    long sentTotal = tenants.stream().filter(t -> !t.bad()).mapToLong(Tenant::sent).sum();
    long receivedTotal = tenants.stream().filter(t -> !t.bad()).mapToLong(Tenant::received).sum();
    if (unlisted > 0) {
      out.printf(
          "  (%,d of %,d tenants not listed, %s)%n",
          unlisted,
          tenants.size(),
          unlistedMismatches == 0
              ? "all ok"
              : String.format("%,d of them MISMATCH", unlistedMismatches));
    }
    out.printf(
        "  %-24s %,15d %,15d%n",
        badTenant == null ? "all" : "all but " + BadTenant.TENANT, sentTotal, receivedTotal);
    if (sentTotal > 0 && receivedTotal == 0) {
      out.println(
          "  the sink received nothing: is the relay's relay.downstream.url " + sinkUrl + " ?");
    }
    if (tenants.stream().anyMatch(t -> !t.expected())) {
      out.println(
          "  tenants that were never sent: relay.tenant.labels must include "
              + tenantLabel
              + " and relay.tenant.prefix must be empty");
    }
    out.println();
    if (relay != null) {
      printRelay(out);
    }
    if (floor != null) {
      OptionalDouble relayCpu = relayCpuPerMillionSeries();
      String ratio =
          relayCpu.isEmpty()
              ? ""
              : String.format(
                  "; relay CPU per series = %.2f × the floor%s",
                  relayCpu.getAsDouble() / floor.referenceCpuSecondsPerMillionSeries(),
                  floor.rate() > 0 ? " at the run's rate" : "");
      row(out, "codec floor", floor.describe() + ratio);
    }
    if (!relayMetrics.isEmpty()) {
      List<String> m = new ArrayList<>();
      relayMetrics.forEach((name, v) -> m.add(String.format("%s %,.0f", name, v)));
      row(out, "relay metrics", String.join(", ", m) + " (whole run; /metrics at the end)");
    }
    generatorCpu.ifPresent(
        cpu ->
            row(
                out,
                "generator CPU",
                String.format(
                    "%.1f s in the measured window (this JVM: sender and sink)",
                    cpu.toNanos() / 1e9)));
    row(
        out,
        "machine",
        cpus
            + " CPUs, shared by the relay"
            + (relay == null ? "" : " (spawned)")
            + ", the sender and the sink");
    out.println();
    out.println(verdict());
  }

  private void printRelay(PrintStream out) {
    String cpu =
        relay
            .measuredCpu()
            .map(
                c -> {
                  double s = c.toNanos() / 1e9;
                  String perMillion =
                      series == 0
                          ? ""
                          : String.format(", %.3f CPU-s per million series", s / (series / 1e6));
                  return String.format(
                      "%.1f s in the measured window (%.2f cores)%s",
                      s, measuredSeconds == 0 ? 0 : s / measuredSeconds, perMillion);
                })
            .orElse(
                relay.diedDuringRun()
                    ? "not known: the relay exited during the run"
                    : "not reported by the platform");
    String total =
        relay.totalCpu().map(c -> String.format("; %.1f s in all", c.toNanos() / 1e9)).orElse("");
    row(out, "relay CPU", cpu + total + " (pid " + relay.pid() + ")");
    long requests = acceptedRequests + failedRequests;
    row(
        out,
        "relay allocation",
        relay.measuredAllocated().stream()
            .mapToObj(
                b ->
                    String.format(
                        "%s MB in the measured window (%s MB/s), %s B per sender request, %s B"
                            + " per series (its threads' allocation counters, over JMX)",
                        num(b / 1e6),
                        num(rateValue(b) / 1e6),
                        requests == 0 ? "-" : num((double) b / requests),
                        series == 0 ? "-" : num((double) b / series)))
            .findFirst()
            .orElse("not known: " + relay.allocationProblem()));
    row(
        out,
        "relay memory",
        relay
            .memory()
            .map(
                m ->
                    String.format(
                        "peak resident %s MB (VmHWM), %s MB resident at the end (VmRSS)",
                        num(m.peakBytes() / 1e6), num(m.currentBytes() / 1e6)))
            .orElse("not known: no /proc/" + relay.pid() + "/status"));
    GcPauses gc = relay.gc();
    row(
        out,
        "relay GC",
        String.format(
            "%,d pauses, total %.1f ms, max %.1f ms (whole process; log %s)",
            gc.count(), gc.totalMillis(), gc.maxMillis(), relay.gcLog()));
    row(
        out,
        "relay exit",
        relay.diedDuringRun()
            ? "exited with code " + relay.exitCode() + " during the run"
            : relay.exitCode() == -1
                ? "did not exit after SIGTERM; killed"
                : relay.exitCode() + " after SIGTERM");
    if (relay.exitCode() != 0 || relay.diedDuringRun()) {
      out.println("relay output (last lines):");
      relay.lastLines().forEach(l -> out.println("  " + l));
    }
  }

  private String verdict() {
    if (ok()) {
      return badTenant == null
          ? "RESULT: OK - every request accepted, every tenant received exactly its series"
          : "RESULT: OK - every request without "
              + BadTenant.TENANT
              + " accepted, every other tenant received exactly its series";
    }
    List<String> why = new ArrayList<>();
    if (abortReason != null) {
      why.add(abortReason);
    }
    if (acceptedRequests == 0) {
      why.add("no measured request was accepted");
    }
    if (badTenant == null && errors() > 0) {
      why.add(String.format("%,d errors", errors()));
    }
    if (badTenant != null && errorsWithoutBad() > 0) {
      why.add(String.format("%,d errors without %s", errorsWithoutBad(), BadTenant.TENANT));
    }
    if (badTenant != null && !badAnswersRetriable()) {
      why.add(
          "requests with "
              + BadTenant.TENANT
              + " answered other than 2xx, 429 or 5xx (or 400 after 429s for --bad-tenant 429)");
    }
    if (mismatch()) {
      why.add("MISMATCH between series sent and received");
    }
    if (relay != null && !relay.diedDuringRun() && relay.exitCode() != 0) {
      why.add("the relay did not exit 0 after SIGTERM");
    }
    return "RESULT: FAILED - " + String.join("; ", why);
  }

  private static void row(PrintStream out, String name, String value) {
    out.printf("%-18s %s%n", name, value);
  }

  private double rateValue(long n) {
    return measuredSeconds == 0 ? 0 : n / measuredSeconds;
  }

  private String rate(long n) {
    return num(rateValue(n));
  }

  /** {@code v} without a fraction when it has none: 40, 12.5. */
  static String plain(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
  }

  private static String answers(Map<Integer, Long> statuses) {
    List<String> answers = new ArrayList<>();
    statuses.forEach((status, n) -> answers.add(String.format("%d: %,d", status, n)));
    return answers.isEmpty() ? "none" : String.join(", ", answers);
  }

  /** A fraction as a percentage: 0.1 → 10%, 0.025 → 2.5%. */
  static String percent(double fraction) {
    return BigDecimal.valueOf(fraction).movePointRight(2).stripTrailingZeros().toPlainString()
        + "%";
  }

  /** Three significant digits at least, grouped: 1,643,210 / 821.9 / 8.23. */
  static String num(double v) {
    double a = Math.abs(v);
    if (a >= 1000) {
      return String.format("%,.0f", v);
    }
    if (a >= 100) {
      return String.format("%.1f", v);
    }
    return String.format("%.2f", v);
  }
}
