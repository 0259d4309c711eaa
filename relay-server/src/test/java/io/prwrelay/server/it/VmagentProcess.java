package io.prwrelay.server.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real vmagent (Debian's {@code victoria-metrics} package, 1.79, or a newer one first on the
 * {@code PATH}) started for one test: it scrapes its own {@code /metrics} every second and
 * remote-writes every series, each given a {@value PrometheusProcess#SERVICE_ID_LABEL} of {@code
 * tenant-0} to {@code tenant-2} by hashing the metric name (vmagent's {@code hashmod} is not
 * Prometheus's, so which names go to which tenant differs from {@link
 * PrometheusProcess#senderConfig}). Its own temporary directory (scrape configuration, remote-write
 * buffer, log) and free port on 127.0.0.1; killed and deleted again by {@link #close()}.
 *
 * <p>A vmagent that knows {@code -remoteWrite.forcePromProto} (1.151; not 1.79) is started with it,
 * as the relay's documentation asks: without it, vmagent sends zstd and a block the relay answers
 * {@code 400} is sent once more re-compressed with snappy ({@link #REPACKED}), other bytes the
 * relay's ledger cannot recognise, so the tenants it had delivered arrive twice downstream.
 *
 * <p>The binary is taken from the system property {@value #BINARY_PROPERTY}, else {@code vmagent}
 * on the {@code PATH}, else {@code /usr/bin/vmagent}. Without one, tests are skipped locally and
 * fail under {@code CI=true}, where {@code .ci/run} installs it.
 */
public final class VmagentProcess implements AutoCloseable {
  /** System property naming the vmagent binary to run. */
  public static final String BINARY_PROPERTY = "prw.vmagent.bin";

  /**
   * What vmagent 1.151 logs when it sends a zstd block answered {@code 400} or {@code 415} again,
   * re-compressed with snappy: the same series in other bytes (1.79 sends snappy only).
   */
  public static final String REPACKED = "Re-packing the block to Prometheus remote write";

  private static final String FORCE_PROM_PROTO = "remoteWrite.forcePromProto";
  private static final String HOST = ChildProcess.HOST;
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final ChildProcess process;
  private final int port;

  private VmagentProcess(ChildProcess process, int port) {
    this.process = process;
    this.port = port;
  }

  /** The vmagent binary that {@link #start} would run, if one was found. */
  public static Optional<Path> binary() {
    return ChildProcess.binary(BINARY_PROPERTY, "vmagent");
  }

  /** The extension of the tests that need vmagent: skipped without it, failed in CI. */
  public static final class Required implements BeforeEachCallback {
    @Override
    public void beforeEach(ExtensionContext context) {
      if (binary().isPresent()) {
        return;
      }
      String message =
          "no vmagent binary (Debian package victoria-metrics; -D" + BINARY_PROPERTY + ")";
      if ("true".equalsIgnoreCase(System.getenv("CI"))) {
        Assertions.fail("vmagent is required in CI: " + message);
      }
      Assumptions.assumeTrue(false, message);
    }
  }

  /**
   * Starts vmagent scraping itself every second and remote-writing to {@code remoteWriteUrl}, and
   * waits until it answers {@code /health}.
   *
   * @param extraFlags further command-line flags, e.g. {@code -remoteWrite.queues=1}
   */
  public static VmagentProcess start(URI remoteWriteUrl, String... extraFlags)
      throws IOException, InterruptedException {
    Path bin = binary().orElseThrow(() -> new IllegalStateException("vmagent binary not found"));
    int port = ChildProcess.freePort();
    Path dir = Files.createTempDirectory("vmagent-it-");
    Path config = dir.resolve("scrape.yml");
    Files.writeString(config, scrapeConfig(port));
    Path log = dir.resolve("vmagent.log");
    List<String> command =
        new ArrayList<>(
            List.of(
                bin.toString(),
                "-httpListenAddr=" + HOST + ":" + port,
                "-promscrape.config=" + config,
                "-remoteWrite.url=" + remoteWriteUrl,
                "-remoteWrite.tmpDataPath=" + dir.resolve("remotewrite"),
                "-remoteWrite.flushInterval=1s"));
    if (knowsFlag(bin, FORCE_PROM_PROTO)) {
      command.add("-" + FORCE_PROM_PROTO + "=true");
    }
    command.addAll(List.of(extraFlags));
    VmagentProcess vmagent =
        new VmagentProcess(ChildProcess.start("vmagent", command, dir, log), port);
    try {
      vmagent.process.awaitReady(
          URI.create(vmagent.baseUrl() + "/health"), () -> true, READY_TIMEOUT);
      return vmagent;
    } catch (RuntimeException | InterruptedException e) {
      vmagent.close();
      throw e;
    }
  }

  /** Whether {@code bin -help} lists the flag {@code -name}. */
  private static boolean knowsFlag(Path bin, String name) throws IOException, InterruptedException {
    Process help = new ProcessBuilder(bin.toString(), "-help").redirectErrorStream(true).start();
    String text = new String(help.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!help.waitFor(10, TimeUnit.SECONDS)) {
      help.destroyForcibly();
    }
    return Pattern.compile("^\\s*-" + Pattern.quote(name) + "\\b", Pattern.MULTILINE)
        .matcher(text)
        .find();
  }

  private static String scrapeConfig(int port) {
    return """
        global:
          scrape_interval: 1s
        scrape_configs:
          - job_name: vmagent-sender
            static_configs:
              - targets: ['%s:%d']
            metric_relabel_configs:
              %s"""
        .formatted(HOST, port, PrometheusProcess.serviceIdRelabelling("      "));
  }

  /** {@code http://127.0.0.1:<port>}. */
  public String baseUrl() {
    return "http://" + HOST + ":" + port;
  }

  /**
   * The sum of vmagent's own metric {@code name} over the series whose labels contain every one of
   * {@code labelParts} (e.g. {@code code="429"}), read from its {@code /metrics}; 0 when none.
   */
  public double metric(String name, String... labelParts) throws IOException, InterruptedException {
    String text =
        HTTP.send(
                HttpRequest.newBuilder(URI.create(baseUrl() + "/metrics"))
                    .timeout(Duration.ofSeconds(5))
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    Pattern line =
        Pattern.compile("^" + Pattern.quote(name) + "(\\{.*\\})?\\s+(\\S+)$", Pattern.MULTILINE);
    Matcher m = line.matcher(text);
    double sum = 0;
    while (m.find()) {
      String labels = m.group(1) == null ? "" : m.group(1);
      if (List.of(labelParts).stream().allMatch(labels::contains)) {
        sum += Double.parseDouble(m.group(2));
      }
    }
    return sum;
  }

  /** The last lines of vmagent's log, for failure messages. */
  public String logTail() {
    return process.logTail(30);
  }

  /** The lines of vmagent's log that contain {@code part}. */
  public List<String> logLines(String part) {
    return process.logLines(part);
  }

  /** Stops vmagent (SIGTERM, then SIGKILL after 5 s) and deletes its temporary directory. */
  @Override
  public void close() throws IOException {
    process.close();
  }
}
