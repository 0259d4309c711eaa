package io.prwrelay.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ingress's memory budget, connection bound, inbound auth and TLS keys. */
class IngressConfigTest {
  @TempDir Path dir;

  private static RelayConfig load(Map<String, String> props) throws ConfigException {
    return RelayConfig.load(null, props, Map.of());
  }

  private static ConfigException error(Map<String, String> props) {
    return assertThrows(ConfigException.class, () -> load(props));
  }

  @Test
  void theBudgetDefaultsToHalfTheDirectMemoryOrAQuarterOfTheHeapAndEachClientToHalfOfThat()
      throws Exception {
    ServerConfig s = RelayConfig.defaults().server();
    assertEquals(ServerConfig.AUTO, s.maxInflightBytes());
    long bigHeap = 64L << 30;
    assertEquals(512L << 20, s.inflightLimit(1L << 30, bigHeap));
    assertEquals(256L << 20, s.inflightLimitPerClient(1L << 30, bigHeap));
    // A 1 GiB container as docker/entrypoint.sh sizes it: 410 MiB heap, 307 MiB direct memory.
    assertEquals((410L << 20) / 4, s.inflightLimit(307L << 20, 410L << 20));
    assertEquals(32L << 20, s.inflightLimit(16L << 20, bigHeap), "never below one largest request");
    assertEquals(32L << 20, s.inflightLimitPerClient(16L << 20, bigHeap));
    assertEquals(4096, s.maxConnections());
    assertFalse(s.auth().enabled());
    assertFalse(s.tls().enabled());
  }

  @Test
  void anExplicitBudgetIsUsedAsGivenAndTheClientShareIsCappedByIt() throws Exception {
    ServerConfig s =
        load(Map.of(
                "relay.server.max-inflight-bytes", "256MiB",
                "relay.server.max-inflight-bytes-per-client", "1GiB"))
            .server();
    assertEquals(256L << 20, s.inflightLimit(1L << 40, 1L << 40));
    assertEquals(256L << 20, s.inflightLimitPerClient(1L << 40, 1L << 40));
  }

  @Test
  void aBudgetBelowOneLargestRequestIsRefused() {
    ConfigException e = error(Map.of("relay.server.max-inflight-bytes", "1MiB"));
    assertEquals("relay.server.max-inflight-bytes", e.key());
    assertTrue(e.getMessage().contains("at least relay.server.max-request-bytes"), e.getMessage());
  }

  @Test
  void theInboundPasswordComesFromItsFileAndNeverAppearsInAnError() throws Exception {
    Path file = dir.resolve("pw");
    Files.writeString(file, "hunter2\n");
    InboundAuthConfig auth =
        load(Map.of(
                "relay.server.basic-auth.username",
                "prom",
                "relay.server.basic-auth.password-file",
                file.toString()))
            .server()
            .auth();
    assertEquals("hunter2", auth.password());
    assertEquals("basic", auth.toString());
    ConfigException e =
        error(
            Map.of(
                "relay.server.basic-auth.password", "hunter2",
                "relay.server.basic-auth.password-file", file.toString(),
                "relay.server.basic-auth.username", "prom"));
    assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
    ConfigException noUser = error(Map.of("relay.server.basic-auth.password", "hunter2"));
    assertFalse(noUser.getMessage().contains("hunter2"), noUser.getMessage());
    ConfigException token = error(Map.of("relay.server.bearer-token", "with space secret-part"));
    assertFalse(token.getMessage().contains("secret-part"), token.getMessage());
  }

  @Test
  void theNewSecretsAreMarkedSecret() {
    assertTrue(InboundAuthConfig.BASIC_AUTH_PASSWORD.secret());
    assertTrue(InboundAuthConfig.BEARER_TOKEN.secret());
  }

  @Test
  void protectingMetricsNeedsCredentials() {
    assertEquals(
        "relay.server.auth.protect-metrics",
        error(Map.of("relay.server.auth.protect-metrics", "true")).key());
  }

  @Test
  void tlsNeedsBothFilesAndClientAuthNeedsACa() throws Exception {
    Path cert = Files.writeString(dir.resolve("c.pem"), "x");
    Path key = Files.writeString(dir.resolve("k.pem"), "x");
    assertEquals(
        "relay.server.tls.cert-file",
        error(Map.of("relay.server.tls.cert-file", cert.toString())).key());
    assertEquals(
        "relay.server.tls.client-auth",
        error(
                Map.of(
                    "relay.server.tls.cert-file", cert.toString(),
                    "relay.server.tls.key-file", key.toString(),
                    "relay.server.tls.client-auth", "require"))
            .key());
    assertEquals(
        "relay.server.tls.key-file",
        error(Map.of("relay.server.tls.key-file", dir.resolve("missing.pem").toString())).key());
    IngressTlsConfig tls =
        load(Map.of(
                "relay.server.tls.cert-file", cert.toString(),
                "relay.server.tls.key-file", key.toString()))
            .server()
            .tls();
    assertTrue(tls.enabled());
    assertEquals(IngressTlsConfig.ClientAuth.NONE, tls.clientAuth());
  }
}
