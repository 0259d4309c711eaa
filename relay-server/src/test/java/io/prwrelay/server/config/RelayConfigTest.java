package io.prwrelay.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.core.route.TenantRules;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RelayConfigTest {
  @TempDir Path dir;

  private Path file(String content) throws Exception {
    Path p = dir.resolve("relay.properties");
    Files.writeString(p, content);
    return p;
  }

  @Test
  void defaultsMatchTheDocumentedTable() throws Exception {
    RelayConfig c = RelayConfig.defaults();
    assertEquals("0.0.0.0", c.serverHost());
    assertEquals(8080, c.serverPort());
    assertEquals(33554432, c.maxRequestBytes());
    assertEquals(134217728, c.maxDecompressedBytes());
    assertEquals("http://127.0.0.1:9009/api/v1/push", c.downstreamUrl().toString());
    assertEquals("X-Scope-OrgID", c.tenantHeader());
    assertEquals(Duration.ofSeconds(10), c.downstreamTimeout());
    assertEquals(64, c.maxConnections());
    assertEquals(List.of("service_id"), c.tenantRules().labels());
    assertEquals(TenantRules.MissingPolicy.DEFAULT, c.tenantRules().missing());
    assertEquals("anonymous", c.tenantRules().defaultTenant());
    assertFalse(c.tenantRules().removeLabel());
    assertEquals("", c.tenantRules().prefix());
    assertFalse(c.trustIncomingHeader());
  }

  @Test
  void systemPropertyBeatsEnvironmentBeatsFileBeatsDefault() throws Exception {
    Path f =
        file("relay.server.port=1001\nrelay.tenant.labels=from_file\nrelay.tenant.prefix=file-\n");
    RelayConfig c =
        RelayConfig.load(
            f,
            Map.of("relay.server.port", "1003"),
            Map.of("RELAY_SERVER_PORT", "1002", "RELAY_TENANT_LABELS", "a,b"));
    assertEquals(1003, c.serverPort());
    assertEquals(List.of("a", "b"), c.tenantRules().labels());
    assertEquals("file-", c.tenantRules().prefix());
    assertEquals(Duration.ofSeconds(10), c.downstreamTimeout());
  }

  @Test
  void environmentVariableNamesFollowTheKeys() {
    for (ConfigKey k : RelayConfig.KEYS) {
      assertTrue(k.environmentVariable().matches("RELAY_[A-Z0-9_]+"), k.environmentVariable());
    }
    assertEquals(
        "RELAY_DOWNSTREAM_URL",
        RelayConfig.KEYS.stream()
            .filter(k -> k.name().equals("relay.downstream.url"))
            .findFirst()
            .orElseThrow()
            .environmentVariable());
  }

  @Test
  void unknownKeyInFileStopsStartupNamingItAndSuggesting() throws Exception {
    Path f = file("relay.downstream.urll=http://x\n");
    ConfigException e =
        assertThrows(ConfigException.class, () -> RelayConfig.load(f, Map.of(), Map.of()));
    assertTrue(e.getMessage().contains("unknown key relay.downstream.urll"), e.getMessage());
    assertTrue(e.getMessage().contains("did you mean relay.downstream.url?"), e.getMessage());
  }

  @Test
  void unknownRelaySystemPropertyStopsStartupButOtherPropertiesAreIgnored() {
    ConfigException e =
        assertThrows(
            ConfigException.class,
            () -> RelayConfig.load(null, Map.of("relay.nope", "1", "java.home", "/x"), Map.of()));
    assertTrue(e.getMessage().contains("relay.nope"), e.getMessage());
  }

  @Test
  void badValuesNameTheKeyAndTheSource() {
    Map<String, String> cases =
        Map.of(
            "relay.server.port", "http",
            "relay.downstream.timeout", "10",
            "relay.tenant.missing", "ignore",
            "relay.downstream.url", "ftp://x/push",
            "relay.tenant.remove-label", "yes",
            "relay.tenant.prefix", "a/b",
            "relay.tenant.labels", " , ",
            "relay.downstream.tenant-header", "X Bad");
    for (Map.Entry<String, String> c : cases.entrySet()) {
      ConfigException e =
          assertThrows(
              ConfigException.class,
              () -> RelayConfig.load(null, Map.of(c.getKey(), c.getValue()), Map.of()),
              c.getKey());
      assertTrue(e.getMessage().startsWith(c.getKey()), e.getMessage());
    }
    ConfigException env =
        assertThrows(
            ConfigException.class,
            () -> RelayConfig.load(null, Map.of(), Map.of("RELAY_SERVER_PORT", "70000")));
    assertTrue(
        env.getMessage().contains("environment variable RELAY_SERVER_PORT"), env.getMessage());
  }

  @Test
  void secretsNeverAppearInDescriptionsOrErrors() throws Exception {
    RelayConfig c =
        RelayConfig.load(
            null,
            Map.of(
                "relay.downstream.basic-auth.username", "user",
                "relay.downstream.basic-auth.password", "hunter2"),
            Map.of());
    assertFalse(c.describe().contains("hunter2"));
    assertTrue(c.describe().contains("auth=basic"));
    ConfigException e =
        assertThrows(
            ConfigException.class,
            () ->
                RelayConfig.load(
                    null, Map.of("relay.downstream.basic-auth.password", "hunter2"), Map.of()));
    assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
  }

  @Test
  void helpListsEveryKeyWithItsDefault() {
    String help = RelayConfig.help();
    for (ConfigKey k : RelayConfig.KEYS) {
      assertTrue(help.contains(k.name() + " (" + k.environmentVariable() + ")"), k.name());
    }
    assertTrue(help.contains("default: X-Scope-OrgID"));
  }

  @Test
  void unknownRelayEnvironmentVariablesAreReported() {
    assertEquals(
        List.of("RELAY_DOWNSTREAM_URLL"),
        RelayConfig.unknownEnvironmentVariables(
            Map.of("RELAY_DOWNSTREAM_URLL", "x", "RELAY_SERVER_PORT", "1", "PATH", "/bin")));
  }
}
