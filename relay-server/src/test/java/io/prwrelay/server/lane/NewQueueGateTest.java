package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.protocol.Protocol;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The bounds on tenant queues made on disk ({@link NewQueueGate}): per sender request, per second,
 * and, through lanes over the in-memory queue twin in simulated time, what the fragments of a
 * request carrying more new tenants than the bound are answered, while tenants with queues are not
 * counted.
 */
class NewQueueGateTest extends SimulatedQueueLanesFixture {
  private final AtomicLong clock = new AtomicLong();

  /** Fragments of {@code tenants}, one each, bound to one sender request. */
  private static List<Fragment> request(String... tenants) {
    List<Fragment> fragments = new ArrayList<>();
    for (String t : tenants) {
      Fragment f =
          Fragment.unbound(
              t, Protocol.V1, Unpooled.wrappedBuffer(new byte[] {1}), new SeriesCounts(1, 1, 0, 0));
      fragments.add(f);
    }
    SenderRequest r = new SenderRequest(ImmediateEventExecutor.INSTANCE, fragments, done -> {});
    for (Fragment f : fragments) {
      f.bind(Long.MAX_VALUE, r);
    }
    return fragments;
  }

  @Test
  void aRequestMakesAtMostItsBoundOfQueuesAndTheRestAreAnswered503NamingIt() {
    NewQueueGate gate = new NewQueueGate(3, 1000, clock::get);
    List<Fragment> r = request("a", "b", "c", "d", "e");
    for (int i = 0; i < 3; i++) {
      assertNull(gate.admit(r.get(i)));
    }
    NewQueueGate.Refusal refused = gate.admit(r.get(3));
    assertEquals("new-tenants-per-request", refused.bound());
    assertEquals(503, refused.outcome().status());
    assertEquals(1000, refused.outcome().retryAfterMillis());
    assertEquals(
        "no queue is made for tenant d now: the request carries more than 3 tenants that have no"
            + " queue yet (relay.delivery.queue.max-new-tenants-per-request=3)",
        refused.outcome().message());
    assertNull(gate.admit(request("f").get(0)), "another request has its own count");
    r.forEach(f -> f.body().release());
  }

  @Test
  void theRateAllowsABurstOfOneSecondsWorthThenRefillsWithTime() {
    NewQueueGate gate = new NewQueueGate(100, 4, clock::get);
    List<Fragment> r = request("a", "b", "c", "d", "e", "f");
    for (int i = 0; i < 4; i++) {
      assertNull(gate.admit(r.get(i)));
    }
    NewQueueGate.Refusal refused = gate.admit(r.get(4));
    assertEquals("new-tenants-per-second", refused.bound());
    assertEquals(
        "no queue is made for tenant e now: 4 tenant queues were made in the last second"
            + " (relay.delivery.queue.max-new-tenants-per-second=4)",
        refused.outcome().message());
    assertEquals(1000, refused.outcome().retryAfterMillis(), "a token in 250 ms, asked 1 s");
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(250));
    assertNull(gate.admit(r.get(5)));
    r.forEach(f -> f.body().release());
  }

  @Test
  void throughTheLanesOnlyTenantsWithoutAQueueAreCountedAndTheOthersAreQueued() {
    Map<String, FragmentOutcome> byTenant = new LinkedHashMap<>();
    lanes =
        new Lanes(
            List.of(sim.loop()),
            QueueLanesFixture.SETTINGS,
            downstream,
            alloc,
            LaneTesting.recording(drained, throttled, states),
            new Lanes.Queues(
                queues,
                () -> T0 + TimeUnit.NANOSECONDS.toMillis(sim.now()),
                1 << 24,
                Duration.ZERO,
                new NewQueueGate(2, 1000, sim::now)));
    for (String t : List.of("known", "n1", "n2", "n3", "n4")) {
      downstream.always(t, ScriptedSender.Reply.status(503)); // the queues keep what they get
    }
    submit(fragment("warm-up", "known"));
    advanceUntil("known has a queue", () -> queue("known").created());

    List<Fragment> fragments = new ArrayList<>();
    for (String t : List.of("known", "n1", "n2", "n3", "n4")) {
      fragments.add(
          LaneTesting.textFragment(t, t, "batch of " + t, sim.now() + 10 * SECOND, byTenant));
    }
    SenderRequest r =
        new SenderRequest(
            sim.loop(),
            fragments,
            done -> {
              for (BatchResult b : done) {
                Fragment f = (Fragment) b;
                byTenant.put(f.tenant(), f.outcome());
              }
            });
    for (Fragment f : fragments) {
      f.bind(sim.now() + 10 * SECOND, r);
    }
    lanes.submit(fragments);
    advanceUntil("every fragment answered", () -> byTenant.size() == 5);
    assertEquals(FragmentOutcome.Kind.QUEUED, byTenant.get("known").kind());
    assertEquals(FragmentOutcome.Kind.QUEUED, byTenant.get("n1").kind());
    assertEquals(FragmentOutcome.Kind.QUEUED, byTenant.get("n2").kind());
    for (String t : List.of("n3", "n4")) {
      assertEquals(503, byTenant.get(t).status(), t);
      assertEquals(
          "no queue is made for tenant "
              + t
              + " now: the request carries more than 2 tenants that have no queue yet"
              + " (relay.delivery.queue.max-new-tenants-per-request=2)",
          byTenant.get(t).message());
      assertEquals(0, queue(t).appended(), "nothing of " + t + " queued");
    }
  }
}
