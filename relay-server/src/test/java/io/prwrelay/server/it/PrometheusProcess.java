package io.prwrelay.server.it;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.xerial.snappy.Snappy;

/**
 * A real Prometheus server started for one test: its own temporary directory (configuration, TSDB,
 * log), its own free port on 127.0.0.1, and killed and deleted again by {@link #close()}.
 *
 * <p>The binary is taken from the system property {@value #BINARY_PROPERTY}, else {@code
 * prometheus} on the {@code PATH}, else {@code /usr/bin/prometheus}. Tests call {@link
 * #assumeAvailable()} first: without a binary they are skipped locally but fail when the
 * environment variable {@code CI} is {@code true}, because CI installs Prometheus.
 *
 * <p>Every wait is bounded; every socket is bound to the loopback address.
 */
public final class PrometheusProcess implements AutoCloseable {
  /** System property naming the Prometheus binary to run. */
  public static final String BINARY_PROPERTY = "prw.prometheus.bin";

  /** Flag that makes Prometheus accept remote-write requests on {@code /api/v1/write}. */
  public static final String REMOTE_WRITE_RECEIVER_FLAG = "--web.enable-remote-write-receiver";

  /** The {@code job} label of the series a {@link #senderConfig sender} scrapes from itself. */
  public static final String SENDER_JOB = "prometheus-sender";

  /** The label a {@link #senderConfig sender} adds to every series it remote-writes. */
  public static final String SERVICE_ID_LABEL = "service_id";

  /** How many distinct {@value #SERVICE_ID_LABEL} values a {@link #senderConfig sender} uses. */
  public static final int SERVICE_ID_COUNT = 3;

  private static final String HOST = ChildProcess.HOST;
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(5);
  private static final int START_ATTEMPTS = 3;
  private static final String READY_LOG_LINE = "Server is ready to receive web requests.";
  private static final int LOG_TAIL_LINES = 40;

  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(2))
          .build();

  private final ChildProcess process;
  private final int port;

  private PrometheusProcess(ChildProcess process, int port) {
    this.process = process;
    this.port = port;
  }

  /** The Prometheus binary that {@link #start} would run, if one was found. */
  public static Optional<Path> binary() {
    return ChildProcess.binary(BINARY_PROPERTY, "prometheus");
  }

  /** Whether a Prometheus binary was found. */
  public static boolean isAvailable() {
    return binary().isPresent();
  }

  /**
   * Skips the calling test when no Prometheus binary is installed, or fails it when running in CI
   * ({@code CI=true}), where its absence is a broken environment rather than a reason to skip.
   */
  public static void assumeAvailable() {
    if (isAvailable()) {
      return;
    }
    String configured = System.getProperty(BINARY_PROPERTY);
    String message =
        configured != null && !configured.isBlank()
            ? "-D" + BINARY_PROPERTY + "=" + configured + " is not an executable file"
            : "no prometheus binary on PATH or at /usr/bin/prometheus (set -D"
                + BINARY_PROPERTY
                + ")";
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      Assertions.fail("Prometheus is required in CI: " + message);
    }
    Assumptions.assumeTrue(false, "Prometheus not available: " + message);
  }

  /** The extension of the tests that need Prometheus: {@link #assumeAvailable()} before each. */
  public static final class Required implements BeforeEachCallback {
    @Override
    public void beforeEach(ExtensionContext context) {
      assumeAvailable();
    }
  }

  /**
   * Starts a Prometheus that scrapes itself and remote-writes to {@code remoteWriteUrl} ({@link
   * #senderConfig}) and waits until it is ready.
   */
  public static PrometheusProcess startSender(URI remoteWriteUrl)
      throws IOException, InterruptedException {
    return start(port -> senderConfig(remoteWriteUrl.toString(), port));
  }

  /**
   * Starts Prometheus with a fixed configuration and waits until it is ready.
   *
   * @param configYaml the contents of {@code prometheus.yml}
   * @param extraFlags further command-line flags, e.g. {@link #REMOTE_WRITE_RECEIVER_FLAG}
   */
  public static PrometheusProcess start(String configYaml, String... extraFlags)
      throws IOException, InterruptedException {
    return start(port -> configYaml, extraFlags);
  }

  /**
   * Starts Prometheus with a configuration that depends on its own listen port (for example one
   * that scrapes itself) and waits until it is ready. If the chosen port was taken by someone else
   * in the meantime, a new one is chosen, a bounded number of times.
   *
   * @param configForPort builds the contents of {@code prometheus.yml} from the listen port
   * @param extraFlags further command-line flags, e.g. {@link #REMOTE_WRITE_RECEIVER_FLAG}
   * @throws IllegalStateException when Prometheus exits or is not ready within 30 s; the message
   *     carries the tail of its log
   */
  public static PrometheusProcess start(IntFunction<String> configForPort, String... extraFlags)
      throws IOException, InterruptedException {
    Path bin =
        binary()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "Prometheus binary not found; see -D" + BINARY_PROPERTY));
    for (int attempt = 1; ; attempt++) {
      int port = ChildProcess.freePort();
      Path dir = Files.createTempDirectory("prometheus-it-");
      Path config = dir.resolve("prometheus.yml");
      Path log = dir.resolve("prometheus.log");
      Files.writeString(config, configForPort.apply(port));

      List<String> command = new ArrayList<>();
      command.add(bin.toString());
      command.add("--config.file=" + config);
      command.add("--storage.tsdb.path=" + dir.resolve("data"));
      command.add("--web.listen-address=" + HOST + ":" + port);
      Collections.addAll(command, extraFlags);

      PrometheusProcess prometheus =
          new PrometheusProcess(ChildProcess.start("Prometheus", command, dir, log), port);
      try {
        prometheus.awaitReady();
        return prometheus;
      } catch (RuntimeException | InterruptedException e) {
        boolean retry =
            e instanceof IllegalStateException
                && attempt < START_ATTEMPTS
                && prometheus.log().contains("address already in use");
        try {
          prometheus.close();
        } catch (IOException | RuntimeException cleanup) {
          e.addSuppressed(cleanup);
        }
        if (!retry) {
          throw e;
        }
      }
    }
  }

  /**
   * Waits until this process has logged that it is ready and {@code /-/ready} answers 200, failing
   * early when the process exits. The log line proves the answer comes from this process and not
   * from whoever else might hold the port.
   */
  private void awaitReady() throws InterruptedException {
    process.awaitReady(
        URI.create(baseUrl() + "/-/ready"), () -> log().contains(READY_LOG_LINE), READY_TIMEOUT);
  }

  /** {@code http://127.0.0.1:<port>}, without a trailing slash. */
  public String baseUrl() {
    return "http://" + HOST + ":" + port;
  }

  /** The port Prometheus listens on. */
  public int port() {
    return port;
  }

  /**
   * The remote-write endpoint; only served when started with {@link #REMOTE_WRITE_RECEIVER_FLAG}.
   */
  public String remoteWriteUrl() {
    return baseUrl() + "/api/v1/write";
  }

  /** The file receiving Prometheus's standard output and error. */
  public Path logFile() {
    return process.logFile();
  }

  /** Everything Prometheus has logged so far, or a note why the log could not be read. */
  public String log() {
    return process.log();
  }

  /** The last lines of the log, for failure messages. */
  public String logTail() {
    return process.logTail(LOG_TAIL_LINES);
  }

  /**
   * Runs an instant query and returns the raw JSON body of {@code /api/v1/query}.
   *
   * @throws IllegalStateException when the response is not HTTP 200
   * @throws UncheckedIOException when the request fails
   */
  public String queryJson(String promql) {
    URI uri =
        URI.create(
            baseUrl() + "/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
    HttpRequest request = HttpRequest.newBuilder(uri).timeout(HTTP_TIMEOUT).GET().build();
    HttpResponse<String> response;
    try {
      response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException("query " + promql + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while querying " + promql, e);
    }
    if (response.statusCode() != 200) {
      throw new IllegalStateException(
          "query " + promql + " answered HTTP " + response.statusCode() + ": " + response.body());
    }
    return response.body();
  }

  /**
   * Runs an instant query and returns its result: one entry per series of a vector, or a single
   * entry without labels for a scalar.
   *
   * @throws IllegalStateException when the query fails or returns a matrix or string
   */
  public List<Series> query(String promql) {
    return parseQueryResult(promql, queryJson(promql));
  }

  /** Extracts the series from an {@code /api/v1/query} response body. */
  static List<Series> parseQueryResult(String promql, String json) {
    Map<?, ?> root = (Map<?, ?>) MiniJson.parse(json);
    if (!"success".equals(root.get("status"))) {
      throw new IllegalStateException("query " + promql + " failed: " + json);
    }
    Map<?, ?> data = (Map<?, ?>) root.get("data");
    String resultType = (String) data.get("resultType");
    Object result = data.get("result");
    List<Series> series = new ArrayList<>();
    switch (resultType) {
      case "vector" -> {
        for (Object element : (List<?>) result) {
          Map<?, ?> entry = (Map<?, ?>) element;
          Map<String, String> labels = new LinkedHashMap<>();
          ((Map<?, ?>) entry.get("metric")).forEach((k, v) -> labels.put((String) k, (String) v));
          series.add(
              new Series(Collections.unmodifiableMap(labels), sampleValue(entry.get("value"))));
        }
      }
      case "scalar" -> series.add(new Series(Map.of(), sampleValue(result)));
      default ->
          throw new IllegalStateException(
              "query " + promql + " returned a " + resultType + "; use queryJson: " + json);
    }
    return List.copyOf(series);
  }

  /** The value of a {@code [<unix seconds>, "<value>"]} pair. */
  private static String sampleValue(Object pair) {
    return (String) ((List<?>) pair).get(1);
  }

  /**
   * POSTs a Prometheus Remote Write 1.0 request the way Prometheus does: the serialized {@code
   * WriteRequest}, snappy block-compressed, with the PRW 1.0 headers.
   *
   * @param url the remote-write endpoint
   * @param writeRequest the serialized, uncompressed {@code prometheus.WriteRequest}
   */
  public static HttpResponse<String> postRemoteWrite(String url, byte[] writeRequest)
      throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url))
            .timeout(HTTP_TIMEOUT)
            .header("Content-Encoding", "snappy")
            .header("Content-Type", "application/x-protobuf")
            .header("X-Prometheus-Remote-Write-Version", "0.1.0")
            .POST(HttpRequest.BodyPublishers.ofByteArray(Snappy.compress(writeRequest)))
            .build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  /** The minimal configuration of a pure remote-write receiver: no scrape jobs, no rules. */
  public static String receiverConfig() {
    return """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        """;
  }

  /**
   * Relabel rules (a YAML list, each line after the first prefixed by {@code indent}) that add
   * {@value #SERVICE_ID_LABEL}{@code ="tenant-N"}, N the metric name's hash modulo {@value
   * #SERVICE_ID_COUNT} (see {@link #expectedServiceId}).
   */
  static String serviceIdRelabelling(String indent) {
    return """
        - source_labels: [__name__]
          modulus: %d
          target_label: __tmp_service_hash
          action: hashmod
        - source_labels: [__tmp_service_hash]
          regex: '(.+)'
          target_label: %s
          replacement: 'tenant-$1'
          action: replace
        - regex: __tmp_service_hash
          action: labeldrop
        """
        .formatted(SERVICE_ID_COUNT, SERVICE_ID_LABEL)
        .replace("\n", "\n" + indent)
        .stripTrailing();
  }

  /**
   * The configuration of a Prometheus that scrapes itself every second and remote-writes every
   * series to {@code remoteWriteUrl}, adding {@value #SERVICE_ID_LABEL}{@code ="tenant-N"} with N
   * from {@code 0} to {@code 2} chosen by hashing the metric name (see {@link #expectedServiceId}).
   * The label is added by {@code write_relabel_configs}, so it exists only on the wire, not in the
   * sender's own TSDB; the temporary hash label is dropped before sending.
   *
   * @param remoteWriteUrl where to send; must not contain quotes or line breaks
   * @param selfPort the sender's own listen port, scraped as job {@value #SENDER_JOB}
   */
  public static String senderConfig(String remoteWriteUrl, int selfPort) {
    return senderConfig(remoteWriteUrl, selfPort, false);
  }

  /**
   * {@link #senderConfig(String, int)}, retrying 429 answers like 5xx ({@code retry_on_http_429},
   * honouring {@code Retry-After}) when {@code retryOn429}: Prometheus then retries a batch
   * answered 429 until it is answered otherwise.
   */
  public static String senderConfig(String remoteWriteUrl, int selfPort, boolean retryOn429) {
    return senderConfig(remoteWriteUrl, selfPort, retryOn429, Duration.ofSeconds(1));
  }

  /**
   * {@link #senderConfig(String, int, boolean)} sending a batch at the latest {@code
   * batchSendDeadline} after its first sample (whole milliseconds): how long a sample may wait in
   * the sender, which a freshness measurement sees on top of the scrape interval.
   */
  public static String senderConfig(
      String remoteWriteUrl, int selfPort, boolean retryOn429, Duration batchSendDeadline) {
    if (remoteWriteUrl.matches("(?s).*['\"\\r\\n].*")) {
      throw new IllegalArgumentException("unsupported characters in URL: " + remoteWriteUrl);
    }
    return """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        scrape_configs:
          - job_name: %s
            static_configs:
              - targets: ['%s:%d']
        remote_write:
          - url: '%s'
            queue_config:
              batch_send_deadline: %dms
              min_backoff: 100ms
              max_backoff: 1s
              retry_on_http_429: %s
            write_relabel_configs:
              %s"""
        .formatted(
            SENDER_JOB,
            HOST,
            selfPort,
            remoteWriteUrl,
            batchSendDeadline.toMillis(),
            retryOn429,
            serviceIdRelabelling("      "));
  }

  /**
   * Asserts that this receiver stores more than three of the sender's metric names, each under the
   * {@value #SERVICE_ID_LABEL} the {@link #senderConfig sender} gives it ({@link
   * #expectedServiceId}).
   */
  void assertServiceIdPerMetricName() {
    List<Series> names =
        query("group by (__name__, " + SERVICE_ID_LABEL + ") ({job=\"" + SENDER_JOB + "\"})");
    Assertions.assertTrue(names.size() > 3, () -> "too few metric names: " + names);
    for (Series name : names) {
      String metric = name.label("__name__");
      Assertions.assertEquals(
          expectedServiceId(metric),
          name.label(SERVICE_ID_LABEL),
          () -> SERVICE_ID_LABEL + " of " + metric);
    }
  }

  /**
   * The {@value #SERVICE_ID_LABEL} a {@link #senderConfig sender} gives to series of {@code
   * metricName}: Prometheus's {@code hashmod} takes the MD5 of the source value, reads its last 8
   * bytes as a big-endian unsigned integer and reduces it modulo {@value #SERVICE_ID_COUNT}.
   */
  public static String expectedServiceId(String metricName) {
    byte[] md5;
    try {
      md5 = MessageDigest.getInstance("MD5").digest(metricName.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    long low = 0;
    for (int i = 8; i < 16; i++) {
      low = (low << 8) | (md5[i] & 0xFF);
    }
    return "tenant-" + Long.remainderUnsigned(low, SERVICE_ID_COUNT);
  }

  /**
   * Stops Prometheus (SIGTERM, then SIGKILL after 5 s) and deletes its temporary directory.
   *
   * @throws InterruptedIOException when interrupted while waiting; the process has then been sent
   *     SIGKILL and the interrupt flag is set again
   * @throws IllegalStateException when the process survives even SIGKILL for 5 s
   */
  @Override
  public void close() throws IOException {
    process.close();
  }

  /**
   * One element of an instant-query result.
   *
   * @param labels the series labels, including {@code __name__} when the query kept it
   * @param value the value as Prometheus formats it, e.g. {@code "42.5"}, {@code "NaN"}, {@code
   *     "+Inf"}
   */
  public record Series(Map<String, String> labels, String value) {
    /** The value as a double, understanding Prometheus's {@code +Inf}/{@code -Inf}/{@code NaN}. */
    public double asDouble() {
      return switch (value) {
        case "+Inf" -> Double.POSITIVE_INFINITY;
        case "-Inf" -> Double.NEGATIVE_INFINITY;
        default -> Double.parseDouble(value);
      };
    }

    /** The value of one label, or {@code null} when the series does not have it. */
    public String label(String name) {
      return labels.get(name);
    }
  }
}
