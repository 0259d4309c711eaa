package io.prwrelay.server.it;

import io.prwrelay.server.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real Grafana Mimir started for one test as a single process ({@code -target=all}) with
 * multi-tenancy on: every request needs {@code X-Scope-OrgID}. Its own temporary directory (blocks,
 * TSDB and WAL, runtime configuration, one log per run), its own free ports on 127.0.0.1 (HTTP,
 * gRPC, gossip), every ring in memory. {@link #restart()} stops it and starts it again on the same
 * ports and data, as an operator's restart does (the ingester replays its WAL); {@link #close()}
 * stops it and deletes the directory.
 *
 * <p>Per-tenant limits (Mimir's {@code limits} block, YAML names such as {@code ingestion_rate},
 * {@code ingestion_burst_size}, {@code max_global_series_per_user}) are given at start and changed
 * with {@link #setTenantLimits}: they live in a runtime configuration file Mimir re-reads every
 * second. Other settings are command-line flags ({@code extraFlags}), e.g. {@code
 * -distributor.ha-tracker.enable=true}.
 *
 * <p>The binary is taken from the system property {@value #BINARY_PROPERTY}, else {@code mimir} on
 * the {@code PATH}, else {@code $GOPATH/bin/mimir} (or {@code ~/go/bin/mimir}), where {@code
 * .ci/mimir.sh} builds it. Without one, tests that {@linkplain Required need it} are skipped
 * locally and fail under {@code CI=true}.
 *
 * <p>What Mimir needs on loopback, each found by running it: every ring's {@code store} {@code
 * inmemory} and {@code instance-addr} 127.0.0.1, the gossip layer bound to and advertising
 * 127.0.0.1, and {@code -query-frontend.instance-addr=127.0.0.1} (without it the querier dials the
 * machine's interface address and queries hang).
 */
public final class MimirProcess implements AutoCloseable {
  /** System property naming the Mimir binary to run. */
  public static final String BINARY_PROPERTY = "prw.mimir.bin";

  /** The header that names the tenant of every Mimir request. */
  public static final String TENANT_HEADER = "X-Scope-OrgID";

  private static final String HOST = ChildProcess.HOST;
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
  private static final Duration RELOAD_TIMEOUT = Duration.ofSeconds(15);
  private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(10);
  private static final int START_ATTEMPTS = 3;
  private static final int LOG_TAIL_LINES = 40;

  /** The rings a single process runs; each is kept in memory and advertised on loopback. */
  private static final List<String> RINGS =
      List.of(
          "distributor.ring",
          "ingester.ring",
          "querier.ring",
          "query-scheduler.ring",
          "ruler.ring",
          "compactor.ring",
          "store-gateway.sharding-ring");

  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(2))
          .build();

  private final Path binary;
  private final Path directory;
  private final List<String> extraFlags;
  private int httpPort;
  private int grpcPort;
  private int gossipPort;
  private int runs;
  private ChildProcess process;

  private MimirProcess(Path binary, Path directory, List<String> extraFlags) {
    this.binary = binary;
    this.directory = directory;
    this.extraFlags = List.copyOf(extraFlags);
  }

  /** The Mimir binary that {@link #start} would run, if one was found. */
  public static Optional<Path> binary() {
    if (System.getProperty(BINARY_PROPERTY) != null) {
      return ChildProcess.binary(BINARY_PROPERTY, "mimir");
    }
    Optional<Path> onPath = ChildProcess.binary(BINARY_PROPERTY, "mimir");
    if (onPath.isPresent()) {
      return onPath;
    }
    String gopath = System.getenv("GOPATH");
    Path goBin =
        gopath != null && !gopath.isBlank()
            ? Paths.get(gopath.split(java.io.File.pathSeparator)[0], "bin", "mimir")
            : Paths.get(System.getProperty("user.home"), "go", "bin", "mimir");
    return Files.isExecutable(goBin) ? Optional.of(goBin) : Optional.empty();
  }

  /** The extension of the tests that need Mimir: skipped without it, failed in CI. */
  public static final class Required implements BeforeEachCallback {
    @Override
    public void beforeEach(ExtensionContext context) {
      if (binary().isPresent()) {
        return;
      }
      String message =
          "no mimir binary on PATH or in $GOPATH/bin (built by .ci/mimir.sh; -D"
              + BINARY_PROPERTY
              + ")";
      if ("true".equalsIgnoreCase(System.getenv("CI"))) {
        Assertions.fail("Mimir is required in CI: " + message);
      }
      Assumptions.assumeTrue(false, message);
    }
  }

  /**
   * Starts Mimir with its default limits and waits until it is ready.
   *
   * @param extraFlags further command-line flags
   */
  public static MimirProcess start(String... extraFlags) throws IOException, InterruptedException {
    return start(Map.of(), extraFlags);
  }

  /**
   * Starts Mimir with per-tenant limits in its runtime configuration and waits until it is ready
   * (the limits apply from the first request).
   *
   * @param tenantLimits per tenant, Mimir limit names ({@code ingestion_rate}) and their values
   * @param extraFlags further command-line flags
   * @throws IllegalStateException when Mimir exits or is not ready within 120 s; the message
   *     carries the tail of its log
   */
  public static MimirProcess start(
      Map<String, Map<String, String>> tenantLimits, String... extraFlags)
      throws IOException, InterruptedException {
    Path bin =
        binary()
            .orElseThrow(
                () ->
                    new IllegalStateException("Mimir binary not found; see -D" + BINARY_PROPERTY));
    MimirProcess mimir =
        new MimirProcess(bin, Files.createTempDirectory("mimir-it-"), List.of(extraFlags));
    try {
      mimir.writeRuntimeConfig(tenantLimits);
      for (int attempt = 1; ; attempt++) {
        mimir.httpPort = ChildProcess.freePort();
        mimir.grpcPort = ChildProcess.freePort();
        mimir.gossipPort = ChildProcess.freePort();
        try {
          mimir.run();
          return mimir;
        } catch (IllegalStateException e) {
          // A port chosen free was taken before Mimir bound it: choose again, a few times.
          if (attempt == START_ATTEMPTS || !e.getMessage().contains("address already in use")) {
            throw e;
          }
        }
      }
    } catch (IOException | RuntimeException | InterruptedException e) {
      mimir.close();
      throw e;
    }
  }

  /** Starts one run of the process on the chosen ports and waits until it is ready. */
  private void run() throws IOException, InterruptedException {
    runs++;
    Path runDir = Files.createDirectories(directory.resolve("run-" + runs));
    Path data = directory.resolve("data");
    List<String> command = new ArrayList<>();
    command.add(binary.toString());
    command.add("-target=all");
    command.add("-auth.multitenancy-enabled=true");
    command.add("-usage-stats.enabled=false");
    command.add("-server.http-listen-address=" + HOST);
    command.add("-server.http-listen-port=" + httpPort);
    command.add("-server.grpc-listen-address=" + HOST);
    command.add("-server.grpc-listen-port=" + grpcPort);
    command.add("-memberlist.bind-addr=" + HOST);
    command.add("-memberlist.bind-port=" + gossipPort);
    command.add("-memberlist.advertise-addr=" + HOST);
    command.add("-query-frontend.instance-addr=" + HOST);
    for (String ring : RINGS) {
      command.add("-" + ring + ".store=inmemory");
      command.add("-" + ring + ".instance-addr=" + HOST);
    }
    command.add("-ingester.ring.replication-factor=1");
    command.add("-store-gateway.sharding-ring.replication-factor=1");
    command.add("-ingester.ring.min-ready-duration=0s");
    command.add("-ingester.ring.final-sleep=0s");
    command.add("-blocks-storage.filesystem.dir=" + data.resolve("blocks"));
    command.add("-blocks-storage.tsdb.dir=" + data.resolve("tsdb"));
    command.add("-blocks-storage.bucket-store.sync-dir=" + data.resolve("tsdb-sync"));
    command.add("-compactor.data-dir=" + data.resolve("compactor"));
    command.add("-ruler.rule-path=" + data.resolve("rules"));
    command.add("-ruler-storage.filesystem.dir=" + data.resolve("ruler"));
    command.add("-activity-tracker.filepath=" + runDir.resolve("activity.log"));
    command.add("-runtime-config.file=" + runtimeConfig());
    command.add("-runtime-config.reload-period=1s");
    command.addAll(extraFlags);
    ChildProcess started =
        ChildProcess.start("Mimir", command, runDir, runDir.resolve("mimir.log"));
    try {
      started.awaitReady(URI.create(baseUrl() + "/ready"), () -> true, READY_TIMEOUT);
    } catch (RuntimeException | InterruptedException e) {
      started.close();
      throw e;
    }
    process = started;
  }

  private Path runtimeConfig() {
    return directory.resolve("runtime.yaml");
  }

  private void writeRuntimeConfig(Map<String, Map<String, String>> tenantLimits)
      throws IOException {
    StringBuilder yaml = new StringBuilder("overrides:\n");
    if (tenantLimits.isEmpty()) {
      yaml.setLength(0);
      yaml.append("overrides: {}\n");
    }
    tenantLimits.forEach(
        (tenant, limits) -> {
          yaml.append("  '").append(tenant).append("':\n");
          limits.forEach(
              (k, v) -> yaml.append("    ").append(k).append(": ").append(v).append('\n'));
        });
    Path tmp = directory.resolve("runtime.yaml.tmp");
    Files.writeString(tmp, yaml);
    Files.move(
        tmp,
        runtimeConfig(),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  /**
   * Replaces every tenant's limits (tenants not named get the defaults again) and waits until
   * Mimir's {@code /runtime_config} shows each of them.
   *
   * @throws IllegalStateException when Mimir has not applied them within 15 s
   */
  public void setTenantLimits(Map<String, Map<String, String>> tenantLimits)
      throws IOException, InterruptedException {
    writeRuntimeConfig(tenantLimits);
    boolean applied =
        Await.within(
            RELOAD_TIMEOUT,
            () -> {
              String shown = get("/runtime_config", null).body();
              return tenantLimits.entrySet().stream()
                  .allMatch(
                      t ->
                          shown.contains(t.getKey() + ":")
                              && t.getValue().entrySet().stream()
                                  .allMatch(l -> shown.contains(l.getKey() + ": " + l.getValue())));
            });
    if (!applied) {
      throw new IllegalStateException(
          "Mimir did not apply " + tenantLimits + " within " + RELOAD_TIMEOUT + "\n" + logTail());
    }
  }

  /** {@code http://127.0.0.1:<port>}, without a trailing slash. */
  public String baseUrl() {
    return "http://" + HOST + ":" + httpPort;
  }

  /** The Remote Write endpoint: {@code /api/v1/push}. */
  public URI pushUrl() {
    return URI.create(baseUrl() + "/api/v1/push");
  }

  /**
   * Runs an instant query as {@code tenant} and returns its result: one entry per series of a
   * vector, or a single entry without labels for a scalar.
   *
   * @throws IllegalStateException when the query fails or returns a matrix or string
   */
  public List<PrometheusProcess.Series> query(String tenant, String promql) {
    return PrometheusProcess.parseQueryResult(promql, queryJson(tenant, promql));
  }

  /**
   * Every sample {@code tenant} stores for the series {@code selector} selects over the last {@code
   * window} (a range-vector query), per series.
   *
   * @param selector a series selector, e.g. {@code {__name__="up"}}
   */
  public List<StoredSeries> samples(String tenant, String selector, Duration window) {
    String promql = selector + "[" + window.toSeconds() + "s]";
    Map<?, ?> root = (Map<?, ?>) MiniJson.parse(queryJson(tenant, promql));
    Map<?, ?> data = (Map<?, ?>) root.get("data");
    if (!"success".equals(root.get("status")) || !"matrix".equals(data.get("resultType"))) {
      throw new IllegalStateException("query " + promql + " did not return a matrix: " + root);
    }
    List<StoredSeries> series = new ArrayList<>();
    for (Object element : (List<?>) data.get("result")) {
      Map<?, ?> entry = (Map<?, ?>) element;
      Map<String, String> labels = new LinkedHashMap<>();
      ((Map<?, ?>) entry.get("metric")).forEach((k, v) -> labels.put((String) k, (String) v));
      List<?> values = (List<?>) entry.get("values");
      long[] timestamps = new long[values.size()];
      double[] samples = new double[values.size()];
      for (int i = 0; i < timestamps.length; i++) {
        List<?> pair = (List<?>) values.get(i);
        timestamps[i] = Math.round(((Number) pair.get(0)).doubleValue() * 1000);
        samples[i] = Double.parseDouble((String) pair.get(1));
      }
      series.add(new StoredSeries(Collections.unmodifiableMap(labels), timestamps, samples));
    }
    return List.copyOf(series);
  }

  /**
   * The raw JSON body of {@code /prometheus/api/v1/query} as {@code tenant}.
   *
   * @throws IllegalStateException when the response is not HTTP 200
   */
  public String queryJson(String tenant, String promql) {
    HttpResponse<String> response =
        get(
            "/prometheus/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8),
            tenant);
    if (response.statusCode() != 200) {
      throw new IllegalStateException(
          "query " + promql + " answered HTTP " + response.statusCode() + ": " + response.body());
    }
    return response.body();
  }

  /**
   * The sum of Mimir's own metric {@code name} over the series whose labels contain every one of
   * {@code labelParts} (e.g. {@code user="tenant-1"}), read from its {@code /metrics}; 0 when none.
   */
  public double metric(String name, String... labelParts) {
    String text = get("/metrics", null).body();
    Matcher m =
        Pattern.compile("^" + Pattern.quote(name) + "(\\{.*\\})?\\s+(\\S+)$", Pattern.MULTILINE)
            .matcher(text);
    double sum = 0;
    while (m.find()) {
      String labels = m.group(1) == null ? "" : m.group(1);
      if (Stream.of(labelParts).allMatch(labels::contains)) {
        sum += Double.parseDouble(m.group(2));
      }
    }
    return sum;
  }

  /** The lines of Mimir's {@code /metrics} for metric {@code name}, for reports and messages. */
  public List<String> metricLines(String name) {
    return get("/metrics", null)
        .body()
        .lines()
        .filter(l -> l.startsWith(name + "{") || l.startsWith(name + " "))
        .toList();
  }

  private HttpResponse<String> get(String pathAndQuery, String tenant) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(baseUrl() + pathAndQuery)).timeout(HTTP_TIMEOUT).GET();
    if (tenant != null) {
      request.header(TENANT_HEADER, tenant);
    }
    try {
      return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException("GET " + pathAndQuery + " from Mimir failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted during GET " + pathAndQuery, e);
    }
  }

  /** Stops Mimir (SIGTERM, then SIGKILL after 5 s), keeping its data and ports for {@link #run}. */
  public void stop() throws IOException {
    if (process != null) {
      ChildProcess running = process;
      process = null;
      running.close();
    }
  }

  /**
   * Starts Mimir again after {@link #stop()}, on the same ports and data, and waits until ready.
   */
  public void startAgain() throws IOException, InterruptedException {
    if (process != null) {
      throw new IllegalStateException("Mimir is running");
    }
    run();
  }

  /** {@link #stop()}, then {@link #startAgain()}. */
  public void restart() throws IOException, InterruptedException {
    stop();
    startAgain();
  }

  /** Whether Mimir is running (started and not {@linkplain #stop() stopped}). */
  public boolean isRunning() {
    return process != null;
  }

  /** The last lines of the current run's log (or a note that none is running), for messages. */
  public String logTail() {
    ChildProcess p = process;
    return p == null ? "(Mimir is stopped)" : p.logTail(LOG_TAIL_LINES);
  }

  /** The lines of the current run's log that contain {@code part}. */
  public List<String> logLines(String part) {
    ChildProcess p = process;
    return p == null ? List.of() : p.logLines(part);
  }

  /** Stops Mimir (SIGTERM, then SIGKILL after 5 s) and deletes its temporary directory. */
  @Override
  public void close() throws IOException {
    try {
      stop();
    } finally {
      if (Files.exists(directory)) {
        try (Stream<Path> paths = Files.walk(directory)) {
          for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
            Files.deleteIfExists(path);
          }
        }
      }
    }
  }

  /**
   * One series of a range query.
   *
   * @param labels its labels, {@code __name__} included
   * @param timestampsMillis the samples' timestamps, oldest first
   * @param values the samples' values, in the same order
   */
  public record StoredSeries(Map<String, String> labels, long[] timestampsMillis, double[] values) {
    /** The value of one label, or {@code null} when the series does not have it. */
    public String label(String name) {
      return labels.get(name);
    }

    /** The newest sample's timestamp, or {@link Long#MIN_VALUE} when there is none. */
    public long newestMillis() {
      return timestampsMillis.length == 0
          ? Long.MIN_VALUE
          : timestampsMillis[timestampsMillis.length - 1];
    }
  }
}
