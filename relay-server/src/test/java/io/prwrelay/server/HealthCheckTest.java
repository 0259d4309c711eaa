package io.prwrelay.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.TestCertificates;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --healthcheck}: exits 0 while the relay configured like the check is ready, 1 with one
 * line when it is not (nothing listening, or an answer other than 200).
 */
class HealthCheckTest {
  private static RelayConfig config(int port) throws Exception {
    return RelayConfig.load(
        null, Map.of("relay.server.host", "0.0.0.0", "relay.server.port", "" + port), Map.of());
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void readyRelayPassesAndAWildcardAddressIsAskedOnLoopback() throws Exception {
    try (RelayFixture relay = new RelayFixture()) {
      RelayConfig cfg = config(relay.relay.address().getPort());
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      assertEquals(0, HealthCheck.run(cfg.server(), new PrintStream(err, true)));
      assertEquals("", err.toString(StandardCharsets.UTF_8));
      assertEquals(
          "http://127.0.0.1:" + relay.relay.address().getPort() + "/-/ready",
          HealthCheck.uri(cfg.server()).toString());
    }
  }

  @Test
  void nothingListeningFailsWithOneLine() throws Exception {
    int port = freePort();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertEquals(1, HealthCheck.run(config(port).server(), new PrintStream(err, true)));
    String out = err.toString(StandardCharsets.UTF_8);
    assertTrue(out.startsWith("prw-relay: not ready: http://127.0.0.1:" + port + "/-/ready"), out);
    assertEquals(1, out.strip().lines().count(), out);
  }

  @Test
  void aTlsIngressIsAskedOverHttps(@TempDir Path dir) throws Exception {
    Path cert = dir.resolve("tls.crt");
    Path key = dir.resolve("tls.key");
    TestCertificates.selfSigned(key, cert, "relay.example");
    Map<String, String> tls =
        Map.of(
            "relay.server.tls.cert-file", cert.toString(),
            "relay.server.tls.key-file", key.toString());
    try (RelayFixture relay = new RelayFixture(tls)) {
      Map<String, String> props = new HashMap<>(tls);
      props.put("relay.server.host", "0.0.0.0");
      props.put("relay.server.port", "" + relay.relay.address().getPort());
      RelayConfig cfg = RelayConfig.load(null, props, Map.of());
      assertEquals(
          "https://127.0.0.1:" + relay.relay.address().getPort() + "/-/ready",
          HealthCheck.uri(cfg.server()).toString());
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      assertEquals(0, HealthCheck.run(cfg.server(), new PrintStream(err, true)));
      assertEquals("", err.toString(StandardCharsets.UTF_8));
    }
  }

  @Test
  void jarModeExitsWithTheCheckResult() throws Exception {
    try (RelayFixture relay = new RelayFixture()) {
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.add("-cp");
      cmd.add(System.getProperty("java.class.path"));
      cmd.add("-Drelay.server.port=" + relay.relay.address().getPort());
      cmd.add(Main.class.getName());
      cmd.add("--healthcheck");
      Process ok = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      ok.getInputStream().readAllBytes();
      assertTrue(ok.waitFor(30, TimeUnit.SECONDS));
      assertEquals(0, ok.exitValue());
    }
  }
}
