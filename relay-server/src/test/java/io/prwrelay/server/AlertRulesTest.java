package io.prwrelay.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The example alert rules in {@code docker/alerts.yml} are valid for Prometheus ({@code promtool
 * check rules}) and pass their unit tests ({@code promtool test rules docker/alerts.test.yml}),
 * both skipped with a message where promtool is not installed; CI installs it with the Debian
 * {@code prometheus} package) and use only metrics docs/metrics.md documents.
 */
class AlertRulesTest {
  private static final Path RULES = Path.of("..", "docker", "alerts.yml");

  @Test
  void promtoolAcceptsTheRules() throws Exception {
    assertPromtoolSucceeds("check", "rules", RULES.toString());
  }

  /**
   * The rules' unit tests ({@code docker/alerts.test.yml}: series that should and should not fire)
   * pass under {@code promtool test rules}.
   */
  @Test
  void promtoolUnitTestsOfTheRulesPass() throws Exception {
    assertPromtoolSucceeds("test", "rules", RULES.resolveSibling("alerts.test.yml").toString());
  }

  /**
   * Runs {@code promtool args} and asserts that it exits 0 saying SUCCESS; skipped without
   * promtool.
   */
  private static void assertPromtoolSucceeds(String... args) throws Exception {
    String promtool = onPath("promtool");
    Assumptions.assumeTrue(
        promtool != null, "promtool is not on the PATH (Debian package prometheus): not checked");
    List<String> command = new ArrayList<>(List.of(promtool));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "promtool finished");
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("SUCCESS"), out);
  }

  @Test
  void everyRelayMetricInTheRulesIsDocumented() throws Exception {
    String rules = Files.readString(RULES);
    String metricsDoc = Files.readString(Path.of("..", "docs", "metrics.md"));
    Matcher m = Pattern.compile("relay_[a-z_]+").matcher(rules);
    int found = 0;
    while (m.find()) {
      found++;
      String metric = m.group().replaceAll("_bucket$", "");
      assertTrue(metricsDoc.contains("`" + metric + "`"), "docs/metrics.md documents " + metric);
    }
    assertTrue(found > 5, "the rules use the relay's metrics");
  }

  private static String onPath(String name) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path p = Path.of(dir, name);
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    return null;
  }
}
