package io.prwrelay.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.core.route.TenantRules;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RelayConfigTest {
  @TempDir Path dir;

  private Path file(String content) throws Exception {
    Path p = dir.resolve("relay.properties");
    Files.writeString(p, content);
    return p;
  }

  /** Asserts that loading with the system property {@code key=value} fails with {@code message}. */
  private static void assertError(String key, String value, String message) {
    assertEquals(message, error(Map.of(key, value)).getMessage());
  }

  private static ConfigException error(Map<String, String> systemProperties) {
    return assertThrows(
        ConfigException.class, () -> RelayConfig.load(null, systemProperties, Map.of()));
  }

  @Test
  void defaultsMatchTheDocumentedTable() throws Exception {
    RelayConfig c = RelayConfig.defaults();
    assertEquals("0.0.0.0", c.server().host());
    assertEquals(8080, c.server().port());
    assertEquals(33554432, c.server().maxRequestBytes());
    assertEquals(134217728, c.server().maxDecompressedBytes());
    assertEquals(Duration.ofSeconds(30), c.server().readTimeout());
    assertEquals(Duration.ofMinutes(5), c.server().idleTimeout());
    assertEquals("http://127.0.0.1:9009/api/v1/push", c.downstream().url().toString());
    assertEquals("X-Scope-OrgID", c.downstream().tenantHeader());
    assertEquals(Duration.ofSeconds(10), c.downstream().timeout());
    assertEquals(Duration.ofSeconds(5), c.downstream().attemptTimeout());
    assertEquals(64, c.downstream().maxConnections());
    assertEquals(DownstreamConfig.ProtocolMode.V1, c.downstream().protocol());
    assertEquals(DeliveryConfig.Mode.SYNC, c.delivery().mode());
    assertNull(c.delivery().queueDir());
    assertEquals(4, c.delivery().lanes().maxConcurrentSends());
    assertEquals(64L << 20, c.delivery().lanes().maxPendingBytes());
    assertEquals(8 << 20, c.delivery().lanes().batchMaxBytes());
    assertEquals(Duration.ofMillis(5), c.delivery().lanes().linger());
    assertEquals(1L << 30, c.delivery().queue().maxTenantBytes());
    assertEquals(8L << 30, c.delivery().queue().maxBytes());
    assertEquals(Duration.ofMillis(100), c.delivery().queue().directTimeout());
    assertEquals(100_000, c.delivery().ledgerMaxEntries());
    assertEquals(Duration.ofMillis(100), c.downstream().initialBackoff());
    assertEquals(Duration.ofSeconds(2), c.downstream().maxBackoff());
    assertEquals("none", c.downstream().auth().kind());
    assertNull(c.downstream().tls().caFile());
    assertEquals(List.of("service_id"), c.tenant().rules().labels());
    assertEquals(TenantRules.MissingPolicy.DEFAULT, c.tenant().rules().missing());
    assertEquals("anonymous", c.tenant().rules().defaultTenant());
    assertFalse(c.tenant().rules().removeLabel());
    assertEquals("", c.tenant().rules().prefix());
    assertFalse(c.tenant().trustIncomingHeader());
    assertNull(c.tenant().trustedHeader());
    assertEquals(100, c.metrics().maxTenants());
    assertEquals(Duration.ofSeconds(10), c.log().failureInterval());
    assertEquals(LogConfig.Level.INFO, c.log().level());
  }

  @Test
  void everyKeyIsDeclaredOnce() {
    Set<String> names = new HashSet<>();
    Set<String> variables = new HashSet<>();
    for (ConfigKey k : ConfigKeys.ALL) {
      assertTrue(names.add(k.name()), "declared twice: " + k.name());
      assertTrue(variables.add(k.environmentVariable()), "two keys share " + k.name());
    }
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
    assertEquals(1003, c.server().port());
    assertEquals(List.of("a", "b"), c.tenant().rules().labels());
    assertEquals("file-", c.tenant().rules().prefix());
    assertEquals(Duration.ofSeconds(10), c.downstream().timeout());
  }

  @Test
  void environmentVariableNamesFollowTheKeys() {
    for (ConfigKey k : ConfigKeys.ALL) {
      assertTrue(k.environmentVariable().matches("RELAY_[A-Z0-9_]+"), k.environmentVariable());
    }
    assertEquals("RELAY_DOWNSTREAM_URL", DownstreamConfig.URL.environmentVariable());
  }

  @Test
  void unknownKeyInFileStopsStartupNamingItAndSuggesting() throws Exception {
    Path f = file("relay.downstream.urll=http://x\n");
    ConfigException e =
        assertThrows(ConfigException.class, () -> RelayConfig.load(f, Map.of(), Map.of()));
    assertEquals(
        "unknown key relay.downstream.urll in "
            + f
            + "; did you mean relay.downstream.url? (see --help for every key)",
        e.getMessage());
    assertEquals("relay.downstream.urll", e.key());
  }

  @Test
  void misspeltKeyIsReportedBeforeTheProblemsItCauses() throws Exception {
    Path f =
        file("relay.downstream.basic-auth.usrname=u\nrelay.downstream.basic-auth.password=p\n");
    ConfigException e =
        assertThrows(ConfigException.class, () -> RelayConfig.load(f, Map.of(), Map.of()));
    assertTrue(
        e.getMessage().contains("did you mean relay.downstream.basic-auth.username?"),
        e.getMessage());
  }

  @Test
  void unknownRelaySystemPropertyStopsStartupButOtherPropertiesAreIgnored() {
    ConfigException e = error(Map.of("relay.nope", "1", "java.home", "/x"));
    assertEquals(
        "unknown key relay.nope as a -D system property (see --help for every key)",
        e.getMessage());
  }

  @Test
  void unreadableFileIsAConfigurationError() {
    Path missing = dir.resolve("missing.properties");
    ConfigException e =
        assertThrows(ConfigException.class, () -> RelayConfig.load(missing, Map.of(), Map.of()));
    assertTrue(e.getMessage().startsWith("--config " + missing + ": cannot read"), e.getMessage());
  }

  @Test
  void badValuesNameTheKeyTheValueAndTheSource() {
    Map<String, String> cases =
        Map.of(
            "relay.server.port", "http",
            "relay.downstream.timeout", "10",
            "relay.tenant.missing", "ignore",
            "relay.downstream.url", "ftp://x/push",
            "relay.tenant.remove-label", "yes",
            "relay.downstream.tenant-header", "X Bad",
            "relay.server.read-timeout", "99999999999999999999s",
            "relay.log.failure-interval", "0s");
    for (Map.Entry<String, String> c : cases.entrySet()) {
      ConfigException e = error(Map.of(c.getKey(), c.getValue()));
      assertTrue(
          e.getMessage().startsWith(c.getKey() + " '" + c.getValue() + "' "), e.getMessage());
      assertTrue(e.getMessage().endsWith(" (from -D" + c.getKey() + ")"), e.getMessage());
      assertEquals(c.getKey(), e.key());
      assertEquals(Optional.of(c.getValue()), e.value());
      assertEquals(Optional.of("-D" + c.getKey()), e.source());
    }
    ConfigException env =
        assertThrows(
            ConfigException.class,
            () -> RelayConfig.load(null, Map.of(), Map.of("RELAY_SERVER_PORT", "70000")));
    assertEquals(
        "relay.server.port '70000' must be between 0 and 65535"
            + " (from environment variable RELAY_SERVER_PORT)",
        env.getMessage());
  }

  @Test
  void tenantRuleProblemsNameTheirKey() {
    Map<String, String> cases =
        Map.of(
            "relay.tenant.prefix", "a/b",
            "relay.tenant.labels", " , ",
            "relay.tenant.default", "..");
    for (Map.Entry<String, String> c : cases.entrySet()) {
      ConfigException e = error(Map.of(c.getKey(), c.getValue()));
      assertEquals(c.getKey(), e.key());
      assertTrue(e.getMessage().startsWith(c.getKey() + " "), e.getMessage());
      assertTrue(e.getMessage().endsWith(" (from -D" + c.getKey() + ")"), e.getMessage());
    }
    assertError(
        "relay.tenant.prefix",
        "a/b",
        "relay.tenant.prefix 'a/b' is not a valid tenant ID prefix (invalid_character)"
            + " (from -Drelay.tenant.prefix)");
    assertEquals(
        "has a duplicate label name in [a, a]",
        error(Map.of("relay.tenant.labels", "a,a")).problem());
  }

  @Test
  void metadataFamilyBoundsAreReadAndCheckedNamingTheirKey() throws Exception {
    RelayConfig c =
        RelayConfig.load(
            null,
            Map.of("relay.metadata.max-family-tenants", "0", "relay.metadata.family-ttl", "90s"),
            Map.of());
    assertEquals(0, c.tenant().rules().maxFamilyTenants());
    assertEquals(java.time.Duration.ofSeconds(90), c.tenant().rules().familyTtl());
    RelayConfig defaults = RelayConfig.load(null, Map.of(), Map.of());
    assertEquals(500_000, defaults.tenant().rules().maxFamilyTenants());
    assertEquals(40L << 20, defaults.tenant().rules().maxFamilyBytes());
    assertEquals(java.time.Duration.ofMinutes(10), defaults.tenant().rules().familyTtl());
    assertError(
        "relay.metadata.family-ttl",
        "500ms",
        "relay.metadata.family-ttl must be at least 1s (from -Drelay.metadata.family-ttl)");
    assertError(
        "relay.metadata.max-family-tenants",
        "-1",
        "relay.metadata.max-family-tenants '-1' must be between 0 and 10000000"
            + " (from -Drelay.metadata.max-family-tenants)");
  }

  @Test
  void tenantLabelsThatAreNoPrometheusLabelNamesAreRejectedNamingKeyAndValue() throws Exception {
    assertError(
        "relay.tenant.labels",
        "service_id, service-id",
        "relay.tenant.labels 'service-id' is not a valid Prometheus label name (letters, digits and"
            + " _, not starting with a digit: [a-zA-Z_][a-zA-Z0-9_]*) (from -Drelay.tenant.labels)");
    for (String bad : List.of("1tenant", "team.id", "tenant id", "ténant")) {
      assertEquals("relay.tenant.labels", error(Map.of("relay.tenant.labels", bad)).key(), bad);
    }
    RelayConfig ok =
        RelayConfig.load(null, Map.of("relay.tenant.labels", "_team, __tenant__,Team9"), Map.of());
    assertEquals(List.of("_team", "__tenant__", "Team9"), ok.tenant().rules().labels());
  }

  @Test
  void haLabelsDefaultToCortexsAndMayBeRenamed() throws Exception {
    RelayConfig defaults = RelayConfig.load(null, Map.of(), Map.of());
    assertEquals("cluster", defaults.tenant().haLabels().cluster());
    assertEquals("__replica__", defaults.tenant().haLabels().replica());
    RelayConfig c =
        RelayConfig.load(
            null,
            Map.of("relay.tenant.ha-cluster-label", "dc", "relay.tenant.ha-replica-label", "rep"),
            Map.of());
    assertEquals("dc", c.tenant().haLabels().cluster());
    assertEquals("rep", c.tenant().haLabels().replica());
    assertEquals(
        "rep", io.prwrelay.server.lane.LaneSettings.of(c).haLabels().replica(), "lanes use them");
    assertEquals(
        "relay.tenant.ha-replica-label",
        error(Map.of("relay.tenant.ha-replica-label", "cluster")).key());
    assertEquals(
        "relay.tenant.ha-cluster-label",
        error(Map.of("relay.tenant.ha-cluster-label", "a,b")).key());
    assertEquals(
        "relay.tenant.ha-cluster-label",
        error(Map.of("relay.tenant.ha-cluster-label", "clus-ter")).key());
  }

  @Test
  void anHaLabelCannotBeRemovedAsTheTenantLabel() throws Exception {
    for (String ha : List.of("cluster", "__replica__")) {
      ConfigException e =
          error(
              Map.of(
                  "relay.tenant.labels", "service_id," + ha, "relay.tenant.remove-label", "true"));
      assertEquals("relay.tenant.remove-label", e.key());
      assertTrue(e.getMessage().contains("would remove the HA label " + ha), e.getMessage());
      assertTrue(e.getMessage().contains("relay.tenant.labels"), e.getMessage());
      assertTrue(
          e.getMessage()
              .contains(
                  ha.equals("cluster")
                      ? "relay.tenant.ha-cluster-label"
                      : "relay.tenant.ha-replica-label"),
          e.getMessage());
    }
    // Kept, it is only read: allowed. Removed when it is not an HA label: allowed.
    RelayConfig.load(null, Map.of("relay.tenant.labels", "cluster"), Map.of());
    RelayConfig.load(
        null,
        Map.of(
            "relay.tenant.labels",
            "cluster",
            "relay.tenant.remove-label",
            "true",
            "relay.tenant.ha-cluster-label",
            "dc"),
        Map.of());
  }

  @Test
  void logLevelTakesTheFourLevels() throws Exception {
    assertEquals(
        java.util.logging.Level.WARNING,
        RelayConfig.load(null, Map.of("relay.log.level", "WARN"), Map.of())
            .log()
            .level()
            .julLevel());
    assertError(
        "relay.log.level",
        "verbose",
        "relay.log.level 'verbose' must be one of error, warn, info, debug"
            + " (from -Drelay.log.level)");
  }

  @Test
  void everyByteCountKeyTakesUnits() throws Exception {
    Map<String, String> set = new java.util.TreeMap<>();
    set.put("relay.server.max-request-bytes", "16MiB");
    set.put("relay.server.max-decompressed-bytes", "64MB");
    set.put("relay.server.max-inflight-bytes", "1GiB");
    set.put("relay.server.max-inflight-bytes-per-client", "512 MiB");
    set.put("relay.delivery.queue.max-tenant-bytes", "2GB");
    set.put("relay.delivery.queue.max-bytes", "1TiB");
    set.put("relay.delivery.queue.segment-bytes", "512KiB");
    set.put("relay.lanes.max-pending-bytes", "32kB");
    set.put("relay.lanes.batch-max-bytes", "4194304B");
    set.put("relay.metadata.max-broadcast-bytes", "1048576");
    set.put("relay.limits.max-memory-bytes", "96MiB");
    set.put("relay.metadata.max-family-bytes", "8MB");
    Set<String> byteKeys = new java.util.TreeSet<>();
    for (ConfigKey k : ConfigKeys.ALL) {
      if (k.name().contains("-bytes")) {
        byteKeys.add(k.name());
      }
    }
    assertEquals(byteKeys, set.keySet(), "every byte-count key is covered");
    RelayConfig c = RelayConfig.load(null, set, Map.of());
    assertEquals(16 << 20, c.server().maxRequestBytes());
    assertEquals(64_000_000, c.server().maxDecompressedBytes(), "MB is 10^6");
    assertEquals(1L << 30, c.server().maxInflightBytes());
    assertEquals(512L << 20, c.server().maxInflightBytesPerClient());
    assertEquals(2_000_000_000L, c.delivery().queue().maxTenantBytes());
    assertEquals(1L << 40, c.delivery().queue().maxBytes());
    assertEquals(8_000_000, c.tenant().rules().maxFamilyBytes());
    assertEquals(512 << 10, c.delivery().queue().segmentBytes());
    assertEquals(32_000, c.delivery().lanes().maxPendingBytes());
    assertEquals(4 << 20, c.delivery().lanes().batchMaxBytes());
    assertEquals(1 << 20, c.tenant().rules().maxBroadcastMetadataBytes());
    assertError(
        "relay.server.max-request-bytes",
        "3GiB",
        "relay.server.max-request-bytes '3GiB' must be between 1 and 2147483639 bytes"
            + " (from -Drelay.server.max-request-bytes)");
  }

  @Test
  void aQueueDirectoryInSyncModeIsIgnoredWithAWarning() throws Exception {
    RelayConfig c =
        RelayConfig.load(null, Map.of("relay.delivery.queue.dir", "/var/lib/prw-relay"), Map.of());
    assertNull(c.delivery().queueDir());
    assertEquals(
        List.of(
            "relay.delivery.queue.dir '/var/lib/prw-relay' is ignored: relay.delivery.mode=sync"
                + " keeps nothing on disk (relay.delivery.mode=queue uses it)"
                + " (from -Drelay.delivery.queue.dir)"),
        c.warnings());
    assertEquals(List.of(), RelayConfig.defaults().warnings());
  }

  @Test
  void aYamlFileIsRefusedPointingToTheMigrationTable() throws Exception {
    Path yaml = dir.resolve("cortex-tenant.yml");
    Files.writeString(
        yaml,
        "# cortex-tenant\nlisten: 0.0.0.0:8080\ntarget: http://cortex:9009/api/v1/push\n"
            + "tenant:\n  label: service_id\n  default: anonymous\n");
    ConfigException e =
        assertThrows(ConfigException.class, () -> RelayConfig.load(yaml, Map.of(), Map.of()));
    assertEquals("--config", e.key());
    assertEquals(
        "--config "
            + yaml
            + " looks like YAML (line 2: 'listen: 0.0.0.0:8080'); the file must be Java properties,"
            + " one key=value per line (relay.server.port=8080). The table 'Migrating from"
            + " cortex-tenant' (docs/migrating-from-cortex-tenant.md) names the relay key for each"
            + " cortex-tenant setting",
        e.getMessage());
    Files.writeString(yaml, "---\nrelay.server.port=1\n");
    assertTrue(
        assertThrows(ConfigException.class, () -> RelayConfig.load(yaml, Map.of(), Map.of()))
            .getMessage()
            .contains("looks like YAML (line 1: '---')"));
    Path properties = file("# a comment: fine\nrelay.server.port: 1001\n");
    assertEquals(1001, RelayConfig.load(properties, Map.of(), Map.of()).server().port());
  }

  @Test
  void deliveryKeysAreCheckedAndNameTheirKey() throws Exception {
    assertError(
        "relay.delivery.mode",
        "queue",
        "relay.delivery.queue.dir must name a directory when relay.delivery.mode=queue"
            + " (from default)");
    assertError(
        "relay.delivery.mode",
        "disk",
        "relay.delivery.mode 'disk' must be one of sync, queue (from -Drelay.delivery.mode)");
    assertError(
        "relay.lanes.batch-max-bytes",
        "8M",
        "relay.lanes.batch-max-bytes '8M' is not a byte count like 1048576, 512KiB, 64MiB or"
            + " 8GiB (KiB, MiB, GiB are powers of 1024; KB, MB, GB powers of 1000)"
            + " (from -Drelay.lanes.batch-max-bytes)");
    assertEquals(
        "relay.delivery.queue.max-bytes '1GiB' must not be less than"
            + " relay.delivery.queue.max-tenant-bytes (from -Drelay.delivery.queue.max-bytes)",
        error(
                Map.of(
                    "relay.delivery.queue.max-bytes", "1GiB",
                    "relay.delivery.queue.max-tenant-bytes", "2GiB"))
            .getMessage());
    RelayConfig c =
        RelayConfig.load(
            null,
            Map.of(
                "relay.delivery.mode", "QUEUE",
                "relay.delivery.queue.dir", "/var/lib/prw-relay",
                "relay.lanes.max-pending-bytes", "512KiB",
                "relay.delivery.queue.direct-timeout", "0"),
            Map.of());
    assertEquals(DeliveryConfig.Mode.QUEUE, c.delivery().mode());
    assertEquals(Path.of("/var/lib/prw-relay"), c.delivery().queueDir());
    assertEquals(512 * 1024, c.delivery().lanes().maxPendingBytes());
    assertEquals(Duration.ZERO, c.delivery().queue().directTimeout(), "0 turns it off");
  }

  @Test
  void downstreamProtocolIsV1V2OrAuto() throws Exception {
    assertError(
        "relay.downstream.protocol",
        "2.0",
        "relay.downstream.protocol '2.0' must be one of v1, v2, auto"
            + " (from -Drelay.downstream.protocol)");
    RelayConfig c = RelayConfig.load(null, Map.of("relay.downstream.protocol", "auto"), Map.of());
    assertEquals(DownstreamConfig.ProtocolMode.AUTO, c.downstream().protocol());
  }

  @Test
  void aReplacedKeyNamesItsReplacement() {
    ConfigException e = error(Map.of("relay.downstream.max-concurrent-sends", "16"));
    assertEquals(
        "key relay.downstream.max-concurrent-sends as a -D system property no longer exists; it"
            + " was replaced by relay.lanes.max-concurrent-sends (downstream requests in flight"
            + " per tenant)",
        e.getMessage());
  }

  @Test
  void crossKeyRulesNameTheKeyToChange() {
    assertError(
        "relay.downstream.retry.max-backoff",
        "10ms",
        "relay.downstream.retry.max-backoff '10ms' must not be less than"
            + " relay.downstream.retry.initial-backoff (from -Drelay.downstream.retry.max-backoff)");
    assertEquals(
        "relay.downstream.bearer-token cannot be combined with relay.downstream.basic-auth.username"
            + " (from -Drelay.downstream.bearer-token)",
        error(
                Map.of(
                    "relay.downstream.bearer-token", "t",
                    "relay.downstream.basic-auth.username", "u"))
            .getMessage());
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
    assertFalse(c.toString().contains("hunter2"));
    assertTrue(c.describe().contains("auth=basic"));
    ConfigException e = error(Map.of("relay.downstream.basic-auth.password", "hunter2"));
    assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
    assertEquals(Optional.empty(), e.value());
    ConfigException control =
        error(
            Map.of(
                "relay.downstream.basic-auth.username", "u",
                "relay.downstream.basic-auth.password", "hun\u0001ter2"));
    assertEquals(
        "relay.downstream.basic-auth.password must not contain control characters"
            + " (from -Drelay.downstream.basic-auth.password)",
        control.getMessage());
    ConfigException inUrl = error(Map.of("relay.downstream.url", "http://u:hunter2@x/push"));
    assertFalse(inUrl.getMessage().contains("hunter2"), inUrl.getMessage());
    assertTrue(inUrl.getMessage().startsWith("relay.downstream.url must not carry credentials"));
  }

  @Test
  void trustedIncomingHeaderIsTheTenantHeader() throws Exception {
    RelayConfig c =
        RelayConfig.load(
            null,
            Map.of(
                "relay.tenant.trust-incoming-header", "true",
                "relay.downstream.tenant-header", "X-Tenant",
                "relay.tenant.prefix", "p-"),
            Map.of());
    assertEquals("X-Tenant", c.tenant().trustedHeader());
    assertEquals("p-team", c.tenant().incomingTenant("team"));
    assertNull(c.tenant().incomingTenant("a|b"));
  }

  @Test
  void helpListsEveryKeyWithItsDefault() {
    String help = RelayConfig.help();
    for (ConfigKey k : ConfigKeys.ALL) {
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
