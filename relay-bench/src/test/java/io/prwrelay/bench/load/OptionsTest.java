package io.prwrelay.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.List;
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
    assertEquals(URI.create("http://127.0.0.1:8080/api/v1/write"), o.relayUrl());
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
  }
}
