package io.prwrelay.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Which tenants keep meters of their own, decided on a moved clock. */
class TenantAdmissionTest {
  private static final Duration INTERVAL = Duration.ofMinutes(1);

  private final MockTicker ticker = Ticker.newMockTicker();
  private final List<String> created = new ArrayList<>();
  private final List<String> removed = new ArrayList<>();

  private TenantAdmission<String> admission(int maxTenants) {
    return new TenantAdmission<>(
        maxTenants,
        INTERVAL,
        ticker,
        label -> {
          created.add(label);
          return label;
        },
        removed::add);
  }

  private void endInterval() {
    ticker.advance(INTERVAL.toNanos(), TimeUnit.NANOSECONDS);
  }

  @Test
  void theFirstTenantsSeenAreAdmittedUntilTheFirstRankingAndTheRestShareOther() {
    TenantAdmission<String> a = admission(2);
    assertEquals("a", a.meters("a"));
    assertEquals("b", a.meters("b"));
    assertEquals("other", a.meters("c"));
    assertEquals("other", a.meters("d"));
    assertEquals("a", a.meters("a"));
    assertEquals(List.of("a", "b", "other"), created, "meters are created once per label");
  }

  @Test
  void noRankingRunsBeforeTheIntervalEnds() {
    TenantAdmission<String> a = admission(1);
    a.routed("small", 1);
    a.meters("small");
    a.routed("big", 1000);
    ticker.advance(INTERVAL.toNanos() - 1, TimeUnit.NANOSECONDS);
    a.routed("big", 1000);
    assertEquals("other", a.meters("big"));
    assertEquals(List.of(), removed);
  }

  @Test
  void theFirstRoutingAfterTheIntervalAdmitsTheTopTenantsAndRemovesTheMetersOfTheRest() {
    TenantAdmission<String> a = admission(2);
    for (String t : List.of("small-1", "small-2", "big", "bigger")) {
      a.meters(t);
    }
    a.routed("small-1", 1);
    a.routed("small-2", 1);
    a.routed("big", 1000);
    a.routed("bigger", 5000);
    endInterval();
    assertEquals(List.of(), removed, "ranks on the next routing, not on its own");
    a.routed("small-1", 10);
    assertEquals(List.of("small-1", "small-2"), removed.stream().sorted().toList());
    assertEquals("big", a.meters("big"));
    assertEquals("bigger", a.meters("bigger"));
    assertEquals("other", a.meters("small-1"));
  }

  @Test
  void eachRankingWeighsOnlyTheIntervalThatEnded() {
    TenantAdmission<String> a = admission(1);
    a.routed("early", 1_000_000);
    a.meters("early");
    endInterval();
    a.routed("late", 1);
    assertEquals("early", a.meters("early"), "the first interval's top tenant");
    assertEquals("other", a.meters("late"));
    endInterval();
    a.routed("late", 1);
    assertEquals("late", a.meters("late"), "early sent nothing in the second interval");
    assertEquals("other", a.meters("early"));
    assertEquals(List.of("early"), removed);
  }

  @Test
  void theSharedMetersOfOtherAreNeverRemoved() {
    TenantAdmission<String> a = admission(1);
    a.meters("a");
    String other = a.meters("b");
    a.routed("c", 10);
    endInterval();
    a.routed("c", 10);
    assertEquals(List.of("a"), removed);
    assertSame(other, a.meters("b"));
  }

  @Test
  void anIntervalTracksTheVolumeOfAtMostTenTimesTheBoundOfTenants() {
    TenantAdmission<String> a = admission(1);
    for (int t = 0; t < 10; t++) {
      a.routed("early-" + t, 1);
    }
    a.routed("late-and-big", 1_000_000);
    endInterval();
    a.routed("early-0", 1);
    assertEquals("other", a.meters("late-and-big"), "not tracked, so not ranked");
  }
}
