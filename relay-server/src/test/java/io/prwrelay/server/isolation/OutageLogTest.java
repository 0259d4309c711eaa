package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.LogCapture;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.RawProto;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * 500 tenants against a dead downstream (a port nobody listens on: every connect is refused) write
 * a bounded number of log lines per interval, and one of them names how many tenants fail and why.
 */
class OutageLogTest {
  @RegisterExtension final LogCapture log = new LogCapture("io.prwrelay.downstream");

  private static final int TENANTS = 500;

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void fiveHundredTenantsAgainstADeadDownstreamLogABoundedAggregate() throws Exception {
    int deadPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      deadPort = s.getLocalPort();
    }
    byte[][] series = new byte[TENANTS][];
    for (int t = 0; t < TENANTS; t++) {
      series[t] =
          RawProto.series(
              RawProto.label("service_id", String.format("t-%03d", t)), RawProto.sample(1, 1));
    }
    byte[] request = RawProto.cat(series);
    int requests = 0;
    try (RelayFixture f =
        new RelayFixture(
            Map.of(
                "relay.downstream.url", "http://127.0.0.1:" + deadPort + "/api/v1/push",
                "relay.downstream.timeout", "1s",
                "relay.log.failure-interval", "1s"))) {
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
      while (System.nanoTime() < end) {
        assertEquals(503, f.write(request).statusCode());
        requests++;
      }
      Pattern aggregate =
          Pattern.compile(
              "downstream unreachable \\(connection refused\\): (\\d+) tenants failing in the last"
                  + " 1s, e\\.g\\. t-\\d{3}, t-\\d{3}, t-\\d{3}, …");
      Await.until(
          "an aggregate line",
          Duration.ofSeconds(5),
          () -> log.messages().stream().anyMatch(l -> aggregate.matcher(l).matches()));
      int named = 0;
      for (String l : log.messages()) {
        Matcher m = aggregate.matcher(l);
        if (m.matches()) {
          named = Math.max(named, Integer.parseInt(m.group(1)));
        }
      }
      List<String> logged = log.messages();
      assertTrue(named > 5, "an aggregate line naming the count in " + logged);
      // The run spans about five 1 s intervals. In each, at most five tenants per reason get lines
      // of their own (backing off, not delivered) and each reason one aggregate line; a line per
      // tenant and failure would be thousands.
      assertTrue(
          logged.size() <= 60,
          requests + " requests × " + TENANTS + " tenants: " + logged.size() + " lines: " + logged);
    }
  }
}
