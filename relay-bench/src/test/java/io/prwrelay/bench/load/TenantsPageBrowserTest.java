package io.prwrelay.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.prwrelay.server.app.RelayServer;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.testkit.ScriptedDownstream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code GET /tenants} in a real browser (headless Chromium, Debian's {@code chromium}) while the
 * load generator drives ten tenants and one exploding tenant through an in-process relay: the page
 * as the browser built it has the exploding tenant on top, its new series per second marked, and on
 * top of its metrics the one that explodes, with its share of the tenant's active series (most of
 * them) though it is a minority of the tenant's traffic. Skipped where {@code chromium} is not
 * installed, except under {@code CI=true}, where CI installs it ({@code .ci/run}) and its absence
 * fails.
 *
 * <p>The screenshot goes to {@code target/tenants-page.png}, or where {@code
 * -Dprw.tenants.screenshot} says: {@code docs/tenants-page.png} in the README was made with {@code
 * mvn -pl relay-bench -am verify -Dtest=TenantsPageBrowserTest
 * -Dprw.tenants.screenshot=$PWD/docs/tenants-page.png -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class TenantsPageBrowserTest {
  /**
   * New series of the exploding tenant in every request: against its share of the steady series
   * (2,000 / 11, about 182 a request), a fifth of its traffic.
   */
  private static final int EXPLODING = 50;

  @TempDir Path dir;

  private ScriptedDownstream sink;
  private RelayServer relay;

  @AfterEach
  void stop() throws Exception {
    if (relay != null) {
      relay.shutdown(Duration.ofSeconds(5));
    }
    if (sink != null) {
      sink.close();
    }
  }

  private static String chromium() {
    for (String name : List.of("chromium", "chromium-browser")) {
      for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
        Path p = Path.of(d, name);
        if (Files.isExecutable(p)) {
          return p.toString();
        }
      }
    }
    return null;
  }

  @Test
  void theExplodingTenantIsOnTopWithTheMetricHoldingMostOfItsSeriesThoughLittleOfItsTraffic()
      throws Exception {
    String browser = chromium();
    if (browser == null) {
      if ("true".equals(System.getenv("CI"))) {
        fail("chromium is not on the PATH under CI=true: .ci/run installs it (Debian chromium)");
      }
      Assumptions.abort("chromium is not on the PATH (Debian package chromium): not checked");
    }
    sink = ScriptedDownstream.counting(0, 1);
    relay =
        new RelayServer(
            RelayConfig.load(
                null,
                Map.of(
                    "relay.server.host", "127.0.0.1",
                    "relay.server.port", "0",
                    "relay.server.io-threads", "2",
                    // Buckets of 6 s: new series per second are known 6 to 12 s into the run.
                    "relay.insight.window", "60s",
                    "relay.downstream.url", sink.url()),
                Map.of()));
    relay.start();
    String base = "http://127.0.0.1:" + relay.address().getPort();
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    Options options =
        Options.parse(
            "--relay-url", base + "/api/v1/write",
            "--codec-floor", "0s",
            "--warmup", "0ms",
            "--duration", "60s",
            "--rate", "20",
            "--connections", "2",
            "--tenants", "10",
            "--series-per-request", "2000",
            "--pool", "8",
            "--exploding-tenant", Integer.toString(EXPLODING));
    CompletableFuture<Summary> run =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return LoadGenerator.run(
                    options, sink, new PrintStream(log, true, StandardCharsets.UTF_8));
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    // Each tenant's steady series repeat every 8 requests (8 bodies, about 1,450 series each); the
    // exploding tenant's grow by 50 per request: on top, with most of its series of the exploding
    // metric, after about 60 requests.
    String api = waitUntilOnTop(base + "/api/v1/tenants", run);
    Path shot = Path.of(System.getProperty("prw.tenants.screenshot", "target/tenants-page.png"));
    String dom = browse(browser, "--dump-dom", base + "/tenants");
    browse(
        browser,
        "--screenshot=" + shot.toAbsolutePath(),
        "--window-size=1280,720",
        "--hide-scrollbars",
        base + "/tenants");
    Summary summary = run.get(60, TimeUnit.SECONDS);
    assertTrue(summary.ok(), log.toString(StandardCharsets.UTF_8));

    List<String> tenants = new ArrayList<>();
    Matcher row = Pattern.compile("<tr data-tenant=\"([^\"]+)\"").matcher(dom);
    while (row.find()) {
      tenants.add(row.group(1));
    }
    assertEquals(11, tenants.size(), dom);
    assertEquals(RequestPool.EXPLODING_TENANT, tenants.get(0), api);
    int first = dom.indexOf("<tr data-tenant=");
    String top = dom.substring(first, dom.indexOf("</tr>", first) + 5);
    Matcher metric =
        Pattern.compile(
                "<span class=\"metric\">([^<]+)</span> <span class=\"share\"[^>]*>(\\d+)% of"
                    + " series</span> <span class=\"small\"[^>]*>(\\d+)% of traffic</span>")
            .matcher(top);
    assertTrue(metric.find(), top);
    assertEquals(RequestPool.EXPLODING_METRIC, metric.group(1), top);
    int seriesShare = Integer.parseInt(metric.group(2));
    int trafficShare = Integer.parseInt(metric.group(3));
    assertTrue(seriesShare >= 50, "most of the tenant's active series: " + top);
    assertTrue(trafficShare <= 30, "a minority of its traffic (about 22 %): " + top);
    assertTrue(
        top.matches("(?s).*<td class=\"num churn\"[^>]*><span class=\"up\"[^>]*>[0-9,]+</span>.*"),
        "the new series per second marked: " + top);
    String rest = dom.substring(dom.indexOf("</tr>", first));
    assertTrue(!rest.contains("<span class=\"up\""), "no steady tenant is marked: " + rest);
    assertTrue(Files.size(shot) > 10_000, "a screenshot of the page at " + shot);
  }

  /**
   * The API's answer once the exploding tenant leads it with at least twice the next tenant's
   * active series, is the only one exploding, and has its exploding metric first with at least half
   * its active series (polled, at most 55 s).
   */
  private static String waitUntilOnTop(String url, CompletableFuture<Summary> run)
      throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    Pattern estimate = Pattern.compile("\"active_series_estimate\":(\\d+)");
    Pattern metric =
        Pattern.compile(
            "\"top_metrics\":\\[\\{\"name\":\""
                + RequestPool.EXPLODING_METRIC
                + "\",\"share\":([0-9.]+)");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(55);
    String body = "";
    while (System.nanoTime() < deadline && !run.isDone()) {
      body =
          client
              .send(
                  HttpRequest.newBuilder(URI.create(url)).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      int first = body.indexOf("\"tenant\":");
      Matcher m = estimate.matcher(body);
      if (first >= 0
          && body.startsWith("\"" + RequestPool.EXPLODING_TENANT + "\"", first + 9)
          && m.find()) {
        long top = Long.parseLong(m.group(1));
        int second = body.indexOf("\"tenant\":", first + 9);
        String row = second < 0 ? body : body.substring(first, second);
        Matcher share = metric.matcher(row);
        // The next tenant's estimate (the top metrics have estimates of their own).
        if (second >= 0
            && m.find(second)
            && top >= 2 * Long.parseLong(m.group(1))
            && row.contains("\"exploding\":true")
            && body.split("\"exploding\":true", -1).length == 2
            && share.find()
            && Double.parseDouble(share.group(1)) >= 0.5) {
          return body;
        }
      }
      Thread.sleep(500);
    }
    throw new AssertionError(
        "the exploding tenant never led /api/v1/tenants with its metric: " + body);
  }

  /** Runs headless Chromium with {@code args}; returns what it printed on standard output. */
  private String browse(String browser, String... args) throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--user-data-dir=" + dir.resolve("profile")));
    command.addAll(List.of(args));
    Path out = dir.resolve("chromium.out");
    Path err = dir.resolve("chromium.err");
    Process p =
        new ProcessBuilder(command)
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    if (!p.waitFor(90, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail("chromium did not finish within 90 s: " + Files.readString(err));
    }
    assertEquals(0, p.exitValue(), Files.readString(err));
    return Files.readString(out);
  }
}
