package io.prwrelay.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class OptionsTest {
  private static final String URL = "--relay-url=http://127.0.0.1:8080/api/v1/write";

  private static String error(String... args) {
    return assertThrows(Options.UsageException.class, () -> Options.parse(args)).getMessage();
  }

  @Test
  void defaults() throws Exception {
    Options o = Options.parse(URL);
    assertEquals(4, o.connections());
    assertEquals(0, o.rate());
    assertEquals(Duration.ofSeconds(20), o.duration());
    assertEquals(Duration.ofSeconds(5), o.warmup());
    assertEquals(2000, o.seriesPerRequest());
    assertEquals(10, o.tenants());
    assertEquals(8, o.labels());
    assertEquals("service_id", o.tenantLabel());
    assertEquals(Options.Encoding.SNAPPY, o.encoding());
    assertEquals(64, o.poolSize());
    assertEquals(Options.EXTERNAL_SINK_PORT, o.sinkPort());
    assertEquals(List.of(), o.jvmArgs());
    assertEquals(List.of(), o.relayArgs());
    assertEquals(5, o.retries());
    assertEquals(Optional.empty(), o.badTenant());
    assertEquals(URI.create("http://127.0.0.1:8080/api/v1/write"), o.relayUrl());
    assertEquals(Duration.ofSeconds(2), o.codecFloor());
    assertEquals(Optional.empty(), o.profiler());
    assertEquals(List.of(), o.sweepTenants());
  }

  @Test
  void aSweepRunsEachTenantCountWithTheOtherOptions() throws Exception {
    Options o =
        Options.parse(
            URL, "--sweep-tenants", "1,10,100,1000", "--chart", "x.svg", "--codec-floor", "0s");
    assertEquals(List.of(1, 10, 100, 1000), o.sweepTenants());
    Options one = o.withTenants(100);
    assertEquals(100, one.tenants());
    assertEquals(List.of(), one.sweepTenants());
    assertEquals(Duration.ZERO, one.codecFloor());
    assertTrue(error(URL, "--chart", "x.svg").contains("--chart needs --sweep-tenants"));
    assertTrue(error(URL, "--sweep-tenants", "10,0").contains("out of range"));
  }

  @Test
  void theProfilerNeedsItsLibraryItsOptionsAndASpawnedRelay() throws Exception {
    Options o =
        Options.parse(
            "--spawn-relay", "pom.xml", "--profile-agent", "pom.xml", "--profile", "event=itimer");
    assertEquals("event=itimer", o.profiler().orElseThrow().options());
    assertTrue(
        error("--spawn-relay", "pom.xml", "--profile", "event=itimer").contains("go together"));
    assertTrue(
        error(URL, "--profile-agent", "pom.xml", "--profile", "event=itimer")
            .contains("only to a spawned relay"));
  }

  @Test
  void aBadTenantWithItsParameters() throws Exception {
    BadTenant throttled = Options.parse(URL, "--bad-tenant", "429").badTenant().orElseThrow();
    assertEquals(
        new BadTenant(BadTenant.Kind.THROTTLED, 0.1, Duration.ofSeconds(2), Duration.ofSeconds(1)),
        throttled);
    assertEquals(Map.of("Retry-After", "1"), throttled.reply().headers());
    assertEquals(429, throttled.reply().status());
    BadTenant failing =
        Options.parse(URL, "--bad-tenant=503", "--bad-share=0.25", "--bad-retry-after=0s")
            .badTenant()
            .orElseThrow();
    assertEquals(BadTenant.Kind.FAILING, failing.kind());
    assertEquals(0.25, failing.share());
    assertEquals(Map.of(), failing.reply().headers(), "0s: no Retry-After");
    BadTenant slow =
        Options.parse(URL, "--bad-tenant", "SLOW", "--bad-delay", "5s").badTenant().orElseThrow();
    assertEquals(200, slow.reply().status());
    assertEquals(Duration.ofSeconds(5), slow.reply().delay());
    assertTrue(
        Options.parse(URL, "--bad-tenant", "slow", "--bad-share", "0.025")
            .describe()
            .contains(
                "bad tenant: tenant-bad in 2.5% of the requests, answered 200 after 2000 ms"));
  }

  @Test
  void relaySettingsAreKeysAndValues() throws Exception {
    Options o =
        Options.parse(
            "--spawn-relay",
            "pom.xml",
            "--relay-arg",
            "relay.delivery.mode=queue",
            "--relay-arg=relay.lanes.linger=1ms");
    assertEquals(List.of("relay.delivery.mode=queue", "relay.lanes.linger=1ms"), o.relayArgs());
    assertTrue(
        error("--spawn-relay", "pom.xml", "--relay-arg", "mode=queue").contains("relay key"));
    assertTrue(error(URL, "--relay-arg", "relay.a=b").contains("only to a spawned relay"));
  }

  @Test
  void bothFormsOfAnOptionAndItsValueAreAccepted() throws Exception {
    Options o =
        Options.parse(
            "--relay-url",
            "http://localhost:8080",
            "--duration=2m",
            "--warmup",
            "500ms",
            "--encoding=ZSTD",
            "--sink-port",
            "0",
            "--rate",
            "12.5");
    assertEquals(Duration.ofMinutes(2), o.duration());
    assertEquals(Duration.ofMillis(500), o.warmup());
    assertEquals(Options.Encoding.ZSTD, o.encoding());
    assertEquals(0, o.sinkPort());
    assertEquals(12.5, o.rate());
    assertEquals(URI.create("http://localhost:8080/api/v1/write"), o.relayUrl(), "default path");
    assertTrue(o.describe().contains("rate 12.5/s"), o.describe());
  }

  @Test
  void helpListsEveryOptionWithItsDefault() {
    String help = Options.help();
    for (String option :
        new String[] {
          "relay (one of):",
          "load:",
          "requests:",
          "--connections=N",
          "(default 4)",
          "--rate=R",
          "--duration=D",
          "(default 20s)",
          "--requests=N",
          "--warmup=D",
          "(default 5s)",
          "--timeout=D",
          "(default 30s)",
          "--threads=N",
          "--series-per-request=N",
          "(default 2000)",
          "--tenants=N",
          "(default 10)",
          "--labels=N",
          "(default 8)",
          "--tenant-label=NAME",
          "(default service_id)",
          "--encoding=snappy|zstd",
          "(default snappy)",
          "--protocol=v1",
          "--relay-url=URL",
          "--spawn-relay=JAR",
          "(default: relay-server/target/prw-relay.jar",
          "--jvm-args=\"ARGS\"",
          "--sink-port=PORT",
          "any free port when spawning; 9009",
          "--wait",
          "--pool=N",
          "(default 64)",
          "--seed=N",
          "(default 42)",
          "--help",
          "--relay-arg=KEY=VALUE",
          "temporary queue directory",
          "--retries=N",
          "(default 5; 0 = never)",
          "bad tenant (sink answers one extra tenant, tenant-bad, badly):",
          "--bad-tenant=429|slow|503",
          "--bad-share=F",
          "(default 0.1)",
          "--bad-delay=D",
          "(default 2s)",
          "--bad-retry-after=D",
          "none (default 1s)",
          "Durations take a unit: 500ms, 20s, 2m, 1h."
        }) {
      assertTrue(help.contains(option), option);
    }
  }

  @Test
  void protocolV2IsRejectedClearly() {
    assertTrue(error(URL, "--protocol", "v2").contains("PRW 2.0"));
    assertTrue(error(URL, "--protocol", "v3").contains("must be v1"));
  }

  @Test
  void onlyLoopbackRelays() throws Exception {
    for (String host : new String[] {"127.0.0.1", "127.1.2.3", "localhost", "[::1]"}) {
      Options.parse("--relay-url", "http://" + host + ":8080/api/v1/write");
    }
    for (String host : new String[] {"10.0.0.1", "192.168.1.1", "example.com", "[::2]"}) {
      String message = error("--relay-url", "http://" + host + ":8080/api/v1/write");
      assertTrue(message.contains("not a loopback address"), message);
    }
    assertTrue(error("--relay-url", "https://127.0.0.1:8080/").contains("http://"));
  }

  @Test
  void badValuesNameTheOption() {
    assertTrue(
        error(URL, "--duration", "20").contains("'--duration': '20' is not a duration like 500ms"));
    assertTrue(error(URL, "--duration", "0s").contains("--duration must be more than 0"));
    assertTrue(
        error(URL, "--connections", "0").contains("--connections 0 is out of range 1..10000"));
    assertTrue(error(URL, "--connections", "x").contains("'--connections': 'x' is not an int"));
    assertTrue(error(URL, "--rate", "-1").contains("--rate must be 0"));
    assertTrue(error(URL, "--labels", "1").contains("--labels 1 is out of range 2..100"));
    assertTrue(error(URL, "--encoding", "gzip").contains("[SNAPPY, ZSTD]"));
    assertTrue(error(URL, "--tenant-label", "a-b").contains("not a Prometheus label name"));
    assertTrue(error(URL, "--tenant-label", "__name__").contains("cannot be __name__"));
    assertTrue(error(URL, "--bogus", "1").contains("Unknown options: '--bogus'"));
    assertTrue(error(URL, "--connections").contains("Missing required parameter"));
    assertTrue(error(URL, "--spawn-relay", "x.jar").contains("not both"));
    assertTrue(error(URL, "--wait", "--jvm-args", "-Xmx1g").contains("--jvm-args applies only"));
    assertTrue(error("--spawn-relay", "missing.jar").contains("does not exist"));
    assertTrue(error("--spawn-relay", "missing.jar", "--wait").contains("does not exist"));
    assertTrue(error(URL, "--retries", "-1").contains("--retries -1 is out of range 0..1000"));
    assertTrue(error(URL, "--bad-share", "0.1").contains("need --bad-tenant"));
    assertTrue(error(URL, "--bad-tenant", "404").contains("must be 429, slow or 503"));
    assertTrue(error(URL, "--bad-tenant", "429", "--bad-share", "0").contains("more than 0"));
    assertTrue(error(URL, "--bad-tenant", "429", "--bad-share", "1.5").contains("at most 1"));
    assertTrue(error(URL, "--bad-tenant", "429", "--bad-delay", "1s").contains("applies to"));
    assertTrue(error(URL, "--bad-tenant", "slow", "--bad-retry-after", "1s").contains("429 or"));
    assertTrue(
        error(URL, "--bad-tenant", "503", "--bad-retry-after", "1500ms").contains("whole seconds"));
    assertTrue(
        error(URL, "--bad-tenant", "429", "--encoding", "zstd")
            .contains("needs --encoding snappy"));
  }
}
