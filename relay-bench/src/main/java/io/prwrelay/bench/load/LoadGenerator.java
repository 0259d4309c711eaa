package io.prwrelay.bench.load;

import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.TenantCount;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/**
 * End-to-end load generator for the relay: {@code java -jar relay-bench/target/loadgen.jar
 * [options]} (see {@link Options#help()}).
 *
 * <p>A run generates a pool of request bodies, starts the sink (the relay's downstream, the
 * testkit's {@link ScriptedDownstream} answering 200 and keeping counts only, and answering the
 * {@link BadTenant} as configured), spawns the relay jar pointed at the sink ({@link SpawnedRelay},
 * with a temporary queue directory in queue mode) or uses a running one, sends for the warm-up and
 * then the measured time while printing progress every second, waits for the sink to receive what
 * the relay accepted, reads a few of the relay's counters and prints a {@link Summary}. The process
 * exits 0 when {@link Summary#ok()}, 1 when not or when the run could not be set up, 2 for a usage
 * error.
 *
 * <p>For use from code, {@link #run(Options, ScriptedDownstream, PrintStream)} drives a relay
 * (given by {@link Options#relayUrl()}) that is already configured to deliver to a sink the caller
 * started.
 */
public final class LoadGenerator {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
  private static final Duration RELAY_STOP_GRACE = Duration.ofSeconds(30);
  private static final Duration DELIVERY_WAIT = Duration.ofSeconds(10);

  private LoadGenerator() {}

  public static void main(String[] args) {
    Options options;
    try {
      options = Options.parse(args);
    } catch (Options.UsageException e) {
      System.err.println("loadgen: " + e.getMessage());
      System.err.println("run with --help to list every option");
      System.exit(2);
      return;
    }
    if (options.helpRequested()) {
      System.out.print(Options.help());
      return;
    }
    int code;
    try {
      if (options.sweepTenants().isEmpty()) {
        code = run(options, System.out).ok() ? 0 : 1;
      } else {
        code = TenantSweep.run(options, System.out) ? 0 : 1;
      }
    } catch (IOException e) {
      System.err.println("loadgen: " + e.getMessage());
      code = 1;
    } catch (InterruptedException e) {
      System.err.println("loadgen: interrupted");
      code = 1;
    }
    System.out.flush();
    System.exit(code);
  }

  /**
   * A whole run as the command line does it: starts the sink, spawns the relay or uses the one at
   * {@link Options#relayUrl()}, sends, stops the spawned relay, and prints progress and the summary
   * to {@code out}.
   *
   * @throws IOException when the sink, the relay or the first connections cannot be set up
   */
  public static Summary run(Options options, PrintStream out)
      throws IOException, InterruptedException {
    try (ScriptedDownstream sink = startSink(options)) {
      out.println("sink:  " + sink.url());
      if (options.relayUrl() != null) {
        out.println(
            "relay: "
                + options.relayUrl()
                + " (running already; its relay.downstream.url must be "
                + sink.url()
                + ")");
        if (options.waitForEnter()) {
          out.println("press Enter to start sending");
          out.flush();
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        }
        return execute(options, sink, options.relayUrl(), null, out);
      }
      Path gcLog = Files.createTempDirectory("prw-loadgen-").resolve("relay-gc.log");
      List<String> jvmArgs = new ArrayList<>(options.jvmArgs());
      options.relayArgs().forEach(a -> jvmArgs.add("-D" + a));
      Path queueDir = null;
      if ("queue".equals(setting(jvmArgs, "relay.delivery.mode"))
          && setting(jvmArgs, "relay.delivery.queue.dir") == null) {
        queueDir = Files.createTempDirectory("prw-loadgen-queue-");
        jvmArgs.add("-Drelay.delivery.queue.dir=" + queueDir);
      }
      out.println("relay: starting " + options.spawnRelay() + " ...");
      try (SpawnedRelay relay =
          SpawnedRelay.start(
              options.spawnRelay(),
              jvmArgs,
              URI.create(sink.url()),
              options.tenantLabel(),
              gcLog)) {
        out.println(
            "relay: pid "
                + relay.pid()
                + " listening at "
                + relay.writeUrl()
                + (jvmArgs.isEmpty() ? "" : ", JVM options " + jvmArgs));
        if (queueDir != null) {
          out.println("relay: queue directory " + queueDir + " (deleted after the run)");
        }
        return execute(options, sink, relay.writeUrl(), relay, out);
      } finally {
        if (queueDir != null) {
          deleteTree(queueDir);
        }
      }
    }
  }

  /** The value of the last {@code -Dkey=...} in {@code jvmArgs}, or {@code null}. */
  private static String setting(List<String> jvmArgs, String key) {
    String value = null;
    for (String a : jvmArgs) {
      if (a.startsWith("-D" + key + "=")) {
        value = a.substring(key.length() + 3);
      }
    }
    return value;
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /**
   * A sink that keeps counts only, on {@link Options#sinkPort()}.
   *
   * @throws IOException naming the port when it cannot be bound
   */
  private static ScriptedDownstream startSink(Options options) throws IOException {
    try {
      return ScriptedDownstream.counting(options.sinkPort(), options.threads());
    } catch (IOException e) {
      throw new IOException("sink " + e.getMessage() + " (use --sink-port)", e);
    }
  }

  /**
   * Drives the relay at {@link Options#relayUrl()}, which must already deliver to {@code sink}, and
   * prints progress and the summary to {@code out}. The sink is left running.
   *
   * @throws IOException when the relay cannot be reached
   */
  public static Summary run(Options options, ScriptedDownstream sink, PrintStream out)
      throws IOException, InterruptedException {
    if (options.relayUrl() == null) {
      throw new IllegalArgumentException("options need --relay-url");
    }
    return execute(options, sink, options.relayUrl(), null, out);
  }

  private static Summary execute(
      Options options, ScriptedDownstream sink, URI relayUrl, SpawnedRelay relay, PrintStream out)
      throws IOException, InterruptedException {
    out.println("load:  " + options.describe());
    StandingReply bad =
        options
            .badTenant()
            .map(b -> new StandingReply(sink, BadTenant.TENANT, b.reply()))
            .orElse(null);
    // Not try-with-resources: the driver must stop writing before the pool's buffers are freed.
    Driver driver = new Driver(options, relayUrl);
    try {
      driver.connect();
      long generateStart = System.nanoTime();
      try (RequestPool pool = RequestPool.generate(options)) {
        out.printf(
            "bodies: %d generated in %.1f s, %,d series each, %s KB compressed / %s KB"
                + " uncompressed on average%n",
            pool.size(),
            (System.nanoTime() - generateStart) / 1e9,
            options.seriesPerRequest(),
            Summary.num(pool.averageCompressedBytes() / 1e3),
            Summary.num(pool.averageUncompressedBytes() / 1e3));
        CodecFloor floor = null;
        if (!options.codecFloor().isZero()) {
          floor =
              CodecFloor.measure(
                  pool,
                  options.encoding(),
                  options.tenantLabel(),
                  options.codecFloor(),
                  options.rate());
          out.println("floor: " + floor.describe());
        }
        out.printf(
            "run:   %.1f s warm-up, then %.1f s measured%s; %d CPUs on this machine%n%n",
            options.warmup().toMillis() / 1e3,
            options.duration().toMillis() / 1e3,
            options.requests() == 0 ? "" : " or " + options.requests() + " requests",
            Runtime.getRuntime().availableProcessors());
        try {
          return drive(options, pool, floor, sink, driver, relayUrl, relay, out);
        } finally {
          driver.close();
        }
      }
    } finally {
      driver.close();
      if (bad != null) {
        bad.close();
      }
    }
  }

  private static Summary drive(
      Options options,
      RequestPool pool,
      CodecFloor floor,
      ScriptedDownstream sink,
      Driver driver,
      URI relayUrl,
      SpawnedRelay relay,
      PrintStream out)
      throws InterruptedException {
    long start = System.nanoTime();
    RunStats stats = new RunStats(options, pool.tenants().size(), pool.badTenantIndex(), start);
    Summary summary = new Summary();
    driver.start(pool, stats);
    long deadline = stats.stopNanos + options.timeout().toNanos() + 15 * SECOND;
    Optional<Duration> relayCpuStart = Optional.empty();
    OptionalLong relayAllocatedStart = OptionalLong.empty();
    Optional<Duration> selfCpuStart = Optional.empty();
    boolean measuring = false;
    boolean relayDied = false;
    long nextTick = start + SECOND;
    long lastTick = start;
    long lastAccepted = 0;
    long lastSeries = 0;
    boolean done = false;
    while (!done) {
      long now = System.nanoTime();
      long wake = measuring ? nextTick : Math.min(nextTick, stats.measureStartNanos);
      done = stats.awaitConnections(Math.max(0, wake - now));
      now = System.nanoTime();
      if (!measuring && stats.isMeasured(now)) {
        measuring = true;
        relayCpuStart = relay == null ? Optional.empty() : relay.cpu();
        relayAllocatedStart = relay == null ? OptionalLong.empty() : relay.allocatedBytes();
        profile(options, relay, true, out);
        selfCpuStart = ProcessHandle.current().info().totalCpuDuration();
      }
      if (!done && now - nextTick >= 0) {
        long accepted = stats.acceptedRequests();
        long series = stats.acceptedSeriesTotal();
        double seconds = (now - lastTick) / 1e9;
        boolean warm = !stats.isMeasured(now);
        RunStats.Phase phase = warm ? stats.warmup : stats.measured;
        Histogram h = phase.plain.histogram();
        out.printf(
            "%5.0fs %-9s %10s req/s %14s series/s   not accepted %,d   p99 %.2f ms%s%n",
            (now - start) / 1e9,
            warm ? "warm-up" : stats.stopping(now) ? "finishing" : "measuring",
            Summary.num((accepted - lastAccepted) / seconds),
            Summary.num((series - lastSeries) / seconds),
            stats.failedRequests(),
            h.getValueAtPercentile(99) / 1e6,
            options.badTenant().isEmpty()
                ? ""
                : String.format(
                    " (with %s: %.2f ms)",
                    BadTenant.TENANT, phase.bad.histogram().getValueAtPercentile(99) / 1e6));
        lastAccepted = accepted;
        lastSeries = series;
        lastTick = now;
        while (now - nextTick >= 0) {
          nextTick += SECOND;
        }
      }
      if (relay != null && !relayDied && !relay.isAlive()) {
        relayDied = true;
        summary.abortReason = "the relay exited with code " + relay.exitValue() + " during the run";
        out.println(summary.abortReason);
        stats.requestStop();
      }
      if (!done && now - deadline >= 0) {
        summary.abortReason = "connections still waiting for answers long after the end";
        stats.requestStop();
        break;
      }
    }
    Optional<Duration> relayCpuEnd = relay == null ? Optional.empty() : relay.cpu();
    OptionalLong relayAllocatedEnd = relay == null ? OptionalLong.empty() : relay.allocatedBytes();
    if (measuring) {
      profile(options, relay, false, out);
    }
    Optional<Duration> selfCpuEnd = ProcessHandle.current().info().totalCpuDuration();
    driver.close();
    awaitDelivered(sink, pool, stats);

    long last = stats.lastMeasuredAnswerNanos();
    summary.measuredSeconds = last == 0 ? 0 : Math.max(0, last - stats.measureStartNanos) / 1e9;
    summary.warmupSeconds = options.warmup().toMillis() / 1e3;
    summary.targetRate = options.rate();
    summary.connections = options.connections();
    RunStats.Phase m = stats.measured;
    summary.acceptedRequests = m.accepted.sum();
    summary.failedRequests = m.failed.sum();
    summary.series = m.series.sum();
    summary.compressedBytes = m.compressedBytes.sum();
    summary.uncompressedBytes = m.uncompressedBytes.sum();
    summary.latency = Summary.Latency.of(m.plain.histogram());
    summary.latencyBad = Summary.Latency.of(m.bad.histogram());
    summary.badTenant = options.badTenant().orElse(null);
    summary.retries = options.retries();
    summary.statusesPlain = stats.statusesPlain();
    summary.statusesBad = stats.statusesBad();
    summary.retried = stats.retried();
    summary.givenUp = stats.givenUp();
    summary.abandoned = stats.abandoned();
    summary.relayMetrics = RelayMetricsScrape.read(relayUrl);
    summary.transportErrors = stats.transportErrors();
    summary.errorSamples = stats.errorSamples();
    summary.sinkErrors = sink.errors();
    summary.sinkFirstError = sink.firstError();
    summary.sinkUrl = sink.url();
    summary.tenantLabel = options.tenantLabel();
    summary.tenants = tenants(pool, stats, sink.counts());
    summary.generatorCpu = difference(selfCpuStart, selfCpuEnd);
    summary.cpus = Runtime.getRuntime().availableProcessors();
    summary.floor = floor;
    summary.tenantsPerRequest = pool.averageTenants();
    if (relay != null) {
      SpawnedRelay.Stopped stopped = relay.stop(RELAY_STOP_GRACE);
      summary.relay =
          new Summary.Relay(
              relay.pid(),
              difference(relayCpuStart, relayCpuEnd),
              relayDied ? Optional.empty() : stopped.cpu(),
              relayAllocatedStart.isPresent() && relayAllocatedEnd.isPresent()
                  ? OptionalLong.of(relayAllocatedEnd.getAsLong() - relayAllocatedStart.getAsLong())
                  : OptionalLong.empty(),
              relay.allocationProblem(),
              stopped.memory(),
              stopped.gc(),
              relay.gcLog().toString(),
              stopped.exitCode(),
              relayDied,
              stopped.lastLines());
    }
    summary.print(out);
    return summary;
  }

  /** Starts or stops {@link Options#profiler()} in the spawned relay, if both are there. */
  private static void profile(Options options, SpawnedRelay relay, boolean start, PrintStream out) {
    if (relay == null || options.profiler().isEmpty() || !relay.isAlive()) {
      return;
    }
    RelayProfiler profiler = options.profiler().get();
    try {
      if (start) {
        profiler.start(relay.pid());
      } else {
        profiler.stop(relay.pid());
        out.println("profile: " + profiler.options() + " (measured window)");
      }
    } catch (IOException e) {
      out.println("profile: " + e.getMessage());
    }
  }

  private static List<Summary.Tenant> tenants(
      RequestPool pool, RunStats stats, Map<String, TenantCount> received) {
    List<Summary.Tenant> tenants = new ArrayList<>();
    List<String> names = pool.tenants();
    for (int i = 0; i < names.size(); i++) {
      TenantCount r = received.get(names.get(i));
      tenants.add(
          new Summary.Tenant(
              names.get(i),
              stats.sentSeries(i),
              stats.unconfirmedSeries(i),
              r == null ? 0 : r.series(),
              r == null ? 0 : r.bytes(),
              true,
              i == pool.badTenantIndex()));
    }
    received.forEach(
        (tenant, r) -> {
          if (!names.contains(tenant) && r.series() > 0) {
            tenants.add(new Summary.Tenant(tenant, 0, 0, r.series(), r.bytes(), false, false));
          }
        });
    return tenants;
  }

  /**
   * The relay may still be delivering after its last answer: queued batches in queue mode, and
   * batches of failed requests it is still retrying. Waits until every tenant but the bad one has
   * received at least the series sent for it, or the sink at least as many series as were sent for
   * them under whatever tenant names (a relay that renames tenants), at most {@link
   * #DELIVERY_WAIT}; then until the counts have not changed for 300 ms (at most two seconds more),
   * so that late duplicates show.
   */
  private static void awaitDelivered(ScriptedDownstream sink, RequestPool pool, RunStats stats)
      throws InterruptedException {
    List<String> names = pool.tenants();
    long sentHealthy = 0;
    for (int i = 0; i < names.size(); i++) {
      sentHealthy += i == pool.badTenantIndex() ? 0 : stats.sentSeries(i);
    }
    long until = System.nanoTime() + DELIVERY_WAIT.toNanos();
    while (System.nanoTime() - until < 0) {
      Map<String, TenantCount> counts = sink.counts();
      boolean all = true;
      for (int i = 0; i < names.size() && all; i++) {
        TenantCount c = counts.get(names.get(i));
        all = i == pool.badTenantIndex() || (c == null ? 0 : c.series()) >= stats.sentSeries(i);
      }
      if (all || (sentHealthy > 0 && healthySeries(sink, pool) >= sentHealthy)) {
        break;
      }
      Thread.sleep(50);
    }
    long quietUntil = System.nanoTime() + 2 * SECOND;
    long seen = healthySeries(sink, pool);
    long quietSince = System.nanoTime();
    while (System.nanoTime() - quietUntil < 0 && System.nanoTime() - quietSince < SECOND * 3 / 10) {
      Thread.sleep(50);
      long now = healthySeries(sink, pool);
      if (now != seen) {
        seen = now;
        quietSince = System.nanoTime();
      }
    }
  }

  private static long healthySeries(ScriptedDownstream sink, RequestPool pool) {
    TenantCount bad = pool.badTenantIndex() < 0 ? null : sink.counts().get(BadTenant.TENANT);
    return sink.totalSeries() - (bad == null ? 0 : bad.series());
  }

  private static Optional<Duration> difference(Optional<Duration> from, Optional<Duration> to) {
    if (from.isEmpty() || to.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(to.get().minus(from.get()));
  }
}
