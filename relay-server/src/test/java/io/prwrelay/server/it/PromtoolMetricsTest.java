package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testkit.ScriptedDownstream;
import java.io.File;
import java.io.OutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A real {@code /metrics} scrape, after traffic that touches every kind of relay metric (delivered,
 * defaulted, failed, other endpoints), passes {@code promtool check metrics} without a single
 * problem, and carries the process and JVM metrics and {@code relay_build_info}.
 *
 * <p>promtool comes with Debian's {@code prometheus} package: found next to the Prometheus binary
 * of {@link PrometheusProcess#binary()} or on the {@code PATH}; without it the test is skipped
 * locally and fails in CI ({@code CI=true}), which installs it.
 */
class PromtoolMetricsTest {
  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aScrapeAfterTrafficPassesPromtoolCheckMetrics() throws Exception {
    Path promtool = promtool();
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.timeout", "1s"))) {
      f.downstream.rule("failing", () -> ScriptedDownstream.Reply.status(503));
      byte[] request =
          RawProto.cat(
              RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(1, 1)),
              RawProto.series(RawProto.label("service_id", "b"), RawProto.sample(1, 1)),
              RawProto.series(RawProto.label("other", "x"), RawProto.sample(1, 1)));
      assertEquals(204, f.write(request).statusCode());
      f.write(RawProto.series(RawProto.label("service_id", "failing"), RawProto.sample(1, 1)));
      assertEquals(200, f.get("/-/ready").statusCode());
      HttpResponse<String> scrape = f.get("/metrics");
      assertEquals(200, scrape.statusCode());
      String text = scrape.body();
      for (String metric :
          new String[] {
            "relay_build_info{",
            "jvm_memory_used_bytes{",
            "jvm_buffer_memory_used_bytes{id=\"direct\"",
            "jvm_gc_",
            "jvm_threads_live_threads",
            "jvm_classes_loaded_classes",
            "process_cpu_usage",
            "process_cpu_seconds_total",
            "system_cpus",
            "process_uptime_seconds",
            "process_files_open_files",
            "process_resident_memory_bytes",
            "relay_pooled_memory_in_use_bytes{kind=\"direct\"}",
            "relay_series_defaulted_total{reason=\"missing\"}",
          }) {
        assertTrue(text.contains(metric), metric + " in\n" + text);
      }
      Process p = new ProcessBuilder(promtool.toString(), "check", "metrics").start();
      try (OutputStream in = p.getOutputStream()) {
        in.write(text.getBytes(StandardCharsets.UTF_8));
      }
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(p.waitFor(30, TimeUnit.SECONDS), "promtool finished");
      assertEquals("", out + err, "promtool check metrics found problems");
      assertEquals(0, p.exitValue(), out + err);
    }
  }

  private static Path promtool() {
    Optional<Path> nextToPrometheus =
        PrometheusProcess.binary()
            .map(b -> b.resolveSibling("promtool"))
            .filter(Files::isExecutable);
    if (nextToPrometheus.isPresent()) {
      return nextToPrometheus.get();
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path p = Path.of(dir, "promtool");
      if (!dir.isEmpty() && Files.isExecutable(p)) {
        return p;
      }
    }
    String message = "no promtool on the PATH (Debian package prometheus)";
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      Assertions.fail("promtool is required in CI: " + message);
    }
    Assumptions.assumeTrue(false, message);
    return null;
  }
}
