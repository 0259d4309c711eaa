package io.prwrelay.server.write;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.server.lane.BatchResult;
import io.prwrelay.server.lane.FragmentOutcome;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.testing.LogCapture;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A request dropping the throttled batches of many tenants is logged with the first {@value
 * ThrottledDropLog#MAX_TENANTS_LOGGED} named and the rest summed, and no more than those are kept
 * until the next line, however many tenants a sender throttles.
 */
class ThrottledDropLogTest {
  @RegisterExtension final LogCapture logged = new LogCapture("io.prwrelay.server");

  private record Dropped(String tenant, int series) implements BatchResult {
    @Override
    public long samples() {
      return series;
    }

    @Override
    public long exemplars() {
      return 0;
    }

    @Override
    public long histograms() {
      return 0;
    }

    @Override
    public FragmentOutcome outcome() {
      return new FragmentOutcome(Kind.THROTTLED, 429, "downstream answered 429", -1, 1);
    }
  }

  private static List<BatchResult> tenants(String prefix, int n) {
    List<BatchResult> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new Dropped(prefix + i, 2));
    }
    return out;
  }

  @Test
  void namesTheFirstTenantsSumsTheRestAndKeepsNoMoreThanThoseUntilItsNextLine() {
    ThrottledDropLog log = new ThrottledDropLog(new RelayMetrics(10, ByteBufAllocator.DEFAULT));
    log.dropped(tenants("a-", 10_000));
    assertEquals(1, logged.messages().size());
    String line = logged.messages().get(0);
    assertTrue(line.contains(": a-0 2 series in 1 request, a-1 2 series in 1 request,"), line);
    assertTrue(
        line.contains(", a-19 2 series in 1 request ... and 19960 series in 9980 batches"), line);
    assertTrue(!line.contains("a-20 "), line);
    assertEquals(0, log.held());
    // Within the minute: counted, not logged, and only the first tenants are kept.
    log.dropped(tenants("b-", 10_000));
    log.dropped(tenants("b-", 10_000));
    assertEquals(1, logged.messages().size());
    assertEquals(ThrottledDropLog.MAX_TENANTS_LOGGED, log.held());
  }
}
