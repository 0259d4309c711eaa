package io.prwrelay.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
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
  }

  @Test
  void helpListsEveryOptionWithItsDefault() {
    String help = Options.help();
    for (String option :
        new String[] {
          "--connections N",
          "(default 4)",
          "--rate R",
          "--duration D",
          "(default 20s)",
          "--requests N",
          "--warmup D",
          "(default 5s)",
          "--series-per-request N",
          "(default 2000)",
          "--tenants N",
          "(default 10)",
          "--labels N",
          "(default 8)",
          "--tenant-label NAME",
          "(default service_id)",
          "--encoding snappy|zstd",
          "(default snappy)",
          "--protocol v1",
          "--relay-url URL",
          "--spawn-relay JAR",
          "--jvm-args",
          "--sink-port",
          "--wait",
          "--pool N",
          "(default 64)"
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
    assertTrue(error(URL, "--duration", "20").contains("--duration '20' is not a duration"));
    assertTrue(error(URL, "--connections", "0").contains("--connections 0 is out of range"));
    assertTrue(error(URL, "--rate", "-1").contains("--rate"));
    assertTrue(error(URL, "--labels", "1").contains("--labels"));
    assertTrue(error(URL, "--encoding", "gzip").contains("snappy or zstd"));
    assertTrue(error(URL, "--tenant-label", "a-b").contains("not a Prometheus label name"));
    assertTrue(error(URL, "--bogus", "1").contains("unknown option --bogus"));
    assertTrue(error(URL, "--connections").contains("needs a value"));
    assertTrue(error(URL, "--spawn-relay", "x.jar").contains("not both"));
    assertTrue(error("--spawn-relay", "missing.jar").contains("does not exist"));
  }
}
