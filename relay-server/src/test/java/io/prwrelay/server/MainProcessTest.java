package io.prwrelay.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.config.RelayVersion;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testkit.ScriptedDownstream;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The relay as a process: command line, startup line, configuration errors, SIGTERM. */
class MainProcessTest {
  @TempDir Path dir;

  private static ProcessBuilder java(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    List<String> props = new ArrayList<>();
    List<String> rest = new ArrayList<>();
    for (String a : args) {
      (a.startsWith("-D") ? props : rest).add(a);
    }
    cmd.addAll(props);
    cmd.add(Main.class.getName());
    cmd.addAll(rest);
    return new ProcessBuilder(cmd).redirectErrorStream(true);
  }

  private static String run(Process p) throws Exception {
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    return out;
  }

  @Test
  void helpPrintsEveryKey() throws Exception {
    Process p = java("--help").start();
    String out = run(p);
    assertEquals(0, p.exitValue());
    assertTrue(out.contains("relay.downstream.url (RELAY_DOWNSTREAM_URL)"), out);
    assertTrue(out.contains("relay.tenant.labels (RELAY_TENANT_LABELS)"), out);
  }

  @Test
  void configurationErrorExits2NamingTheKey() throws Exception {
    Path config = dir.resolve("relay.properties");
    Files.writeString(config, "relay.tenant.missing=maybe\n");
    Process p = java("--config", config.toString()).start();
    String out = run(p);
    assertEquals(2, p.exitValue(), out);
    assertTrue(
        out.contains(
            "configuration error: relay.tenant.missing 'maybe' must be one of default, drop, reject"),
        out);
  }

  @Test
  void anInvalidTenantLabelNameExits2NamingTheKeyAndTheValue() throws Exception {
    Process p = java("-Drelay.tenant.labels=service-id").start();
    String out = run(p);
    assertEquals(2, p.exitValue(), out);
    assertTrue(
        out.contains(
            "configuration error: relay.tenant.labels 'service-id' is not a valid Prometheus label"
                + " name"),
        out);
  }

  @Test
  void aYamlConfigurationFileExits2PointingToTheMigrationTable() throws Exception {
    Path yaml = dir.resolve("cortex-tenant.yml");
    Files.writeString(yaml, "listen: 0.0.0.0:8080\ntarget: http://cortex:9009/api/v1/push\n");
    Process p = java("--config", yaml.toString()).start();
    String out = run(p);
    assertEquals(2, p.exitValue(), out);
    assertTrue(
        out.contains(
            "configuration error: --config "
                + yaml
                + " looks like YAML (line 1: 'listen: 0.0.0.0:8080'); the file must be Java"
                + " properties"),
        out);
    assertTrue(out.contains("'Migrating from cortex-tenant'"), out);
  }

  @Test
  void portInUseExits1WithinSecondsNamingTheAddress() throws Exception {
    try (java.net.ServerSocket taken =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      Process p =
          java("-Drelay.server.host=127.0.0.1", "-Drelay.server.port=" + taken.getLocalPort())
              .start();
      try {
        assertTrue(p.waitFor(20, TimeUnit.SECONDS), "the process exits instead of hanging");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(1, p.exitValue(), out);
        assertEquals(
            "prw-relay: cannot start: cannot listen on 127.0.0.1:"
                + taken.getLocalPort()
                + ": Address already in use",
            out.strip());
      } finally {
        p.destroyForcibly();
      }
    }
  }

  @Test
  void startsRelaysAndStopsWithExitCode0OnSigterm() throws Exception {
    try (ScriptedDownstream downstream = new ScriptedDownstream()) {
      Path config = dir.resolve("relay.properties");
      Files.writeString(
          config,
          "relay.server.host=127.0.0.1\nrelay.server.port=0\nrelay.downstream.url="
              + downstream.url()
              + "\nrelay.downstream.basic-auth.username=u\nrelay.downstream.basic-auth.password=TOPSECRET\n");
      // A time zone 14 hours from UTC: log times must still be UTC.
      Process p = java("-Duser.timezone=Pacific/Kiritimati", "--config", config.toString()).start();
      try {
        BufferedReader log =
            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        List<String> lines = new ArrayList<>();
        Matcher m = null;
        for (String line = log.readLine(); line != null; line = log.readLine()) {
          lines.add(line);
          m = Pattern.compile("listening on /127\\.0\\.0\\.1:(\\d+)").matcher(line);
          if (m.find()) {
            break;
          }
          m = null;
        }
        assertNotNull(m, "startup line in " + lines);
        String startup = lines.get(lines.size() - 1);
        assertTrue(startup.contains("prw-relay " + RelayVersion.VERSION), startup);
        assertTrue(startup.contains("tenant-labels=service_id"), startup);
        assertTrue(startup.contains("downstream=" + downstream.url()), startup);
        assertFalse(startup.contains("TOPSECRET"), startup);
        Matcher time =
            Pattern.compile(
                    "^(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z) INFO io\\.prwrelay: ")
                .matcher(startup);
        assertTrue(time.find(), startup);
        long skew =
            Math.abs(
                java.time.Duration.between(
                        java.time.Instant.parse(time.group(1)), java.time.Instant.now())
                    .toSeconds());
        assertTrue(skew < 600, "log time is UTC: " + startup);
        int port = Integer.parseInt(m.group(1));
        HttpResponse<String> r =
            RelayFixture.write(
                HttpClient.newHttpClient(),
                URI.create("http://127.0.0.1:" + port + "/api/v1/push"),
                RawProto.series(RawProto.label("service_id", "t"), RawProto.sample(1, 1)));
        assertEquals(204, r.statusCode(), r.body());
        assertTrue(
            downstream.received().stream().anyMatch(x -> "t".equals(x.tenant())),
            "the series reached its tenant");
        p.toHandle().destroy(); // SIGTERM, keeping the output stream open
        StringBuilder rest = new StringBuilder();
        for (String line = log.readLine(); line != null; line = log.readLine()) {
          rest.append(line).append('\n');
        }
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), rest.toString());
        assertTrue(rest.toString().contains("stopped"), rest.toString());
        assertTrue(
            (String.join("\n", lines) + rest)
                .contains(
                    "downstream check: an empty push to "
                        + downstream.url()
                        + " as tenant anonymous answered 200: the downstream takes writes"),
            rest.toString());
        assertFalse(rest.toString().contains("TOPSECRET"));
      } finally {
        p.destroyForcibly();
      }
    }
  }
}
