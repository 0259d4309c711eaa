package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBufAllocator;
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
 * The cost of new tenants: the lanes of all loops never pass {@code relay.lanes.max}, a new tenant
 * beyond it takes the place of the lane used longest ago, and each sender may cause only so many
 * new lanes ({@link NewLaneBudget}) while its known tenants and the other senders go on as before.
 * Two simulated loops on one clock.
 */
@Timeout(value = 30, threadMode = ThreadMode.SEPARATE_THREAD)
class NewLanesTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  private final SimulatedLoop one = new SimulatedLoop();
  private final SimulatedLoop two = new SimulatedLoop(one);
  private final ScriptedSender downstream = new ScriptedSender();
  private final Map<String, FragmentOutcome> outcomes = new LinkedHashMap<>();
  private final List<String> made = new ArrayList<>();
  private final List<String> forgotten = new ArrayList<>();
  private Lanes lanes;

  private void lanes(int maxLanes) {
    LaneSettings s =
        new LaneSettings(
            4,
            1 << 20,
            1 << 20,
            Duration.ofMillis(5),
            Duration.ofMinutes(5),
            maxLanes,
            Duration.ofMillis(100),
            Duration.ofSeconds(2),
            Duration.ofSeconds(5),
            LaneTesting.MAX_CONVERTED);
    LaneObserver lanesMadeAndForgotten =
        new LaneObserver() {
          @Override
          public void laneCreated(String tenant) {
            made.add(tenant);
          }

          @Override
          public void laneForgotten(String tenant) {
            forgotten.add(tenant);
          }
        };
    lanes =
        new Lanes(
            List.of(one.loop(), two.loop()), s, downstream, ALLOC, lanesMadeAndForgotten, null);
  }

  /** Fragment {@code id} of {@code tenant} sent by {@code sender}. */
  private Fragment fragment(String id, String tenant, Object sender) {
    return LaneTesting.senderFragment(id, tenant, sender, one.now() + 60 * SECOND, outcomes);
  }

  private void submit(Fragment... fragments) {
    lanes.submit(List.of(fragments));
    SimulatedLoop.runDue(one, two);
  }

  private void advance(long millis) {
    SimulatedLoop.advance(Duration.ofMillis(millis), one, two);
  }

  @AfterEach
  void close() {
    LaneTesting.settleAndClose(lanes, one, two);
  }

  @Test
  void lanesOfEveryLoopStopAtTheBoundAndTheNextNewTenantIsAnswered503() {
    lanes(4);
    for (String t : List.of("t0", "t1", "t2", "t3", "t4", "t5")) {
      downstream.always(t, Reply.silence());
    }
    submit(
        fragment("f0", "t0", null),
        fragment("f1", "t1", null),
        fragment("f2", "t2", null),
        fragment("f3", "t3", null));
    assertEquals(4, lanes.size());
    submit(fragment("f4", "t4", null), fragment("f5", "t5", null));
    assertEquals(4, lanes.size(), "relay.lanes.max=4 is never passed");
    for (String id : List.of("f4", "f5")) {
      FragmentOutcome o = outcomes.get(id);
      assertEquals(503, o.status(), id);
      assertEquals("too many tenants are busy at once (relay.lanes.max=4)", o.message());
    }
    for (String id : List.of("f0", "f1", "f2", "f3")) {
      assertNull(outcomes.get(id), id + " still waits for its downstream");
    }
  }

  @Test
  void aNewTenantAtTheBoundTakesThePlaceOfTheLaneUsedLongestAgo() {
    // Three tenants of one loop: a loop evicts only its own lanes.
    String old = LaneTesting.tenantOnLoop("old-b", 1, 2);
    String recent = LaneTesting.tenantOnLoop("recent-b", 1, 2);
    String fresh = LaneTesting.tenantOnLoop("new", 1, 2);
    lanes(2);
    submit(fragment("old1", old, null));
    advance(10);
    submit(fragment("recent1", recent, null));
    advance(10);
    submit(fragment("old2", old, null)); // now "recent" is the one used longest ago
    advance(10);
    assertEquals(2, lanes.size());
    submit(fragment("new1", fresh, null));
    assertEquals(Kind.DELIVERED, outcomes.get("new1").kind());
    assertEquals(2, lanes.size(), "the new lane took an idle one's place");
    assertEquals(List.of(recent), forgotten, "the lane used longest ago made room");
    submit(fragment("old3", old, null));
    assertEquals(Kind.DELIVERED, outcomes.get("old3").kind());
    assertEquals(List.of(old, recent, fresh), made, "old kept its lane");
  }

  @Test
  void aSenderPastItsNewLaneBudgetIsRefusedWhileItsKnownTenantsAndOtherSendersGoOn() {
    lanes(1000);
    NewLaneBudget budget = new NewLaneBudget(1, 2);
    lanes.limitNewLanes(budget);
    Object churner = "churner";
    Object innocent = "innocent";
    submit(fragment("i1", "team", innocent));
    submit(fragment("c1", "new1", churner), fragment("c2", "new2", churner));
    submit(fragment("c3", "new3", churner), fragment("c4", "new1", churner));
    FragmentOutcome refused = outcomes.get("c3");
    assertEquals(Kind.UNAVAILABLE, refused.kind());
    assertEquals(503, refused.status());
    assertEquals(1000, refused.retryAfterMillis(), "a token is back in a second");
    assertEquals(
        "this sender sent more new tenants than it may open lanes for"
            + " (relay.lanes.new-per-sender-rate=1, relay.lanes.new-per-sender-burst=2)",
        refused.message());
    assertEquals(Kind.DELIVERED, outcomes.get("c4").kind(), "a tenant with a lane costs nothing");
    assertEquals(1, budget.refused());
    assertEquals(3, lanes.size(), "no lane was made for the refused tenant");

    submit(fragment("i2", "team", innocent), fragment("i3", "team-b", innocent));
    assertEquals(Kind.DELIVERED, outcomes.get("i2").kind());
    assertEquals(Kind.DELIVERED, outcomes.get("i3").kind(), "another sender has its own budget");

    advance(1000);
    submit(fragment("c5", "new3", churner));
    assertEquals(Kind.DELIVERED, outcomes.get("c5").kind(), "a second later, one more new lane");
    submit(fragment("c6", "new4", churner));
    assertEquals(Kind.UNAVAILABLE, outcomes.get("c6").kind());
  }

  @Test
  void batchesWithoutASenderAreNeverCharged() {
    lanes(1000);
    lanes.limitNewLanes(new NewLaneBudget(1, 1));
    submit(fragment("a", "a", null), fragment("b", "b", null), fragment("c", "c", null));
    outcomes.values().forEach(o -> assertEquals(Kind.DELIVERED, o.kind()));
    assertEquals(3, outcomes.size());
  }
}
