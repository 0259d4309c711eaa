package io.prwrelay.server.lane;

import static io.prwrelay.server.lane.HaPairs.requests;
import static io.prwrelay.server.lane.LaneTesting.settings;
import static io.prwrelay.server.lane.LaneTesting.statesInto;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * Coalescing never lets one sender's first series decide how the downstream judges another's: with
 * HA deduplication on, Cortex and Mimir accept or drop a whole request by the {@code cluster} and
 * {@code __replica__} of its first series, so a lane joins fragments into one request only when
 * their first series carry the same values of both (absent being a value of its own). Lanes forced
 * to coalesce (one send at a time, the first one slow), on a simulated clock.
 */
@Timeout(value = 30, threadMode = ThreadMode.SEPARATE_THREAD)
class HaPairLaneTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  private final SimulatedLoop sim = new SimulatedLoop();
  private final ScriptedSender downstream = new ScriptedSender();
  private final Map<String, FragmentOutcome> outcomes = new LinkedHashMap<>();
  private final List<String> events = new ArrayList<>();
  private Lanes lanes;

  @AfterEach
  void close() {
    LaneTesting.settleAndClose(lanes, sim);
  }

  /** Lanes with one send at a time; tenant a's first answer takes 50 ms. */
  private void busyLanes() {
    lanes =
        new Lanes(
            List.of(sim.loop()),
            settings(1, 1 << 20, 1 << 20, 5),
            downstream,
            PooledByteBufAllocator.DEFAULT,
            statesInto(events),
            null);
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(50)));
  }

  private Fragment ha(String id, String cluster, String replica) {
    return HaPairs.fragment(id, "a", cluster, replica, sim.now() + 10 * SECOND, outcomes);
  }

  private Fragment forwarded(String id, String cluster, String replica) {
    return HaPairs.forwarded(id, "a", cluster, replica, sim.now() + 10 * SECOND, outcomes);
  }

  private void submit(Fragment... fragments) {
    for (Fragment f : fragments) {
      lanes.submit(List.of(f)); // one sender request each
    }
    sim.runDue();
  }

  private void allDelivered(int n) {
    assertEquals(n, outcomes.size());
    outcomes.forEach((id, o) -> assertEquals(Kind.DELIVERED, o.kind(), id));
  }

  @Test
  void fragmentsOfTwoReplicasNeverTravelTogether() {
    busyLanes();
    submit(ha("p0", "prod", "r1"));
    submit(
        ha("p1", "prod", "r1"),
        ha("s1", "prod", "r2"),
        ha("p2", "prod", "r1"),
        ha("s2", "prod", "r2"),
        ha("p3", "prod", "r1"));
    sim.advance(Duration.ofMillis(50));
    sim.advance(Duration.ofMillis(10));
    assertEquals(
        List.of(List.of("r1:p0"), List.of("r1:p1", "r1:p2", "r1:p3"), List.of("r2:s1", "r2:s2")),
        requests(downstream, "a"),
        "each replica's fragments together, in the order they came, never with the other's");
    allDelivered(6);
  }

  @Test
  void fragmentsJudgedAlikeStillTravelTogether() {
    busyLanes();
    submit(ha("p0", "prod", "r1"));
    submit(ha("p1", "prod", "r1"), ha("p2", "prod", "r1"), ha("p3", "prod", "r1"));
    sim.advance(Duration.ofMillis(50));
    assertEquals(
        List.of(List.of("r1:p0"), List.of("r1:p1", "r1:p2", "r1:p3")), requests(downstream, "a"));
    allDelivered(4);
  }

  @Test
  void aFirstSeriesWithoutBothLabelsIsAKeyOfItsOwnWhateverItsCluster() {
    busyLanes();
    submit(ha("p0", "prod", "r1"));
    submit(
        ha("n1", null, null),
        ha("s1", "prod", "r2"),
        ha("c1", "prod", null),
        ha("n2", null, null),
        ha("o1", "other", "r2"),
        ha("c2", "prod", null),
        ha("s2", "prod", "r2"));
    for (int i = 0; i < 6; i++) {
      sim.advance(Duration.ofMillis(10));
    }
    assertEquals(
        List.of(
            List.of("r1:p0"),
            List.of("-:n1", "-:c1", "-:n2", "-:c2"),
            List.of("r2:s1", "r2:s2"),
            List.of("r2:o1")),
        requests(downstream, "a"),
        "without both labels a push is accepted unchecked (a cluster alone too): such fragments"
            + " travel together, apart from each replica, and another cluster's r2 apart");
    allDelivered(8);
  }

  @Test
  void onlyTheFirstSeriesOfAFragmentCounts() {
    busyLanes();
    submit(ha("p0", "prod", "r1"));
    // A sender's own request that mixes replicas is judged by its first series, alone or joined.
    Fragment mixed =
        HaPairs.fragment(
            "m1",
            "a",
            HaPairs.request(
                HaPairs.series("prod", "r1", "m1"), HaPairs.series("prod", "r2", "m1b")),
            sim.now() + 10 * SECOND,
            outcomes);
    submit(ha("s1", "prod", "r2"), mixed, ha("p1", "prod", "r1"));
    sim.advance(Duration.ofMillis(50));
    sim.advance(Duration.ofMillis(10));
    assertEquals(
        List.of(List.of("r1:p0"), List.of("r2:s1"), List.of("r1:m1", "r2:m1b", "r1:p1")),
        requests(downstream, "a"));
    allDelivered(4);
  }

  @Test
  void forwardedSenderBodiesAreJudgedByTheirFirstSeriesToo() {
    busyLanes();
    submit(forwarded("p0", "prod", "r1"));
    submit(
        forwarded("s1", "prod", "r2"),
        ha("p1", "prod", "r1"),
        forwarded("p2", "prod", "r1"),
        ha("s2", "prod", "r2"));
    sim.advance(Duration.ofMillis(50));
    sim.advance(Duration.ofMillis(10));
    assertEquals(
        List.of(List.of("r1:p0"), List.of("r2:s1", "r2:s2"), List.of("r1:p1", "r1:p2")),
        requests(downstream, "a"));
    allDelivered(5);
  }
}
