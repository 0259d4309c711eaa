package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertFalse;

import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.queue.InMemoryTenantQueue;
import io.prwrelay.server.queue.InMemoryTenantQueues;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * What the queue-mode lane tests in simulated time share: lanes on a {@link SimulatedLoop} over the
 * in-memory queue twin, whose appends, reads and acknowledgements complete on that loop, so nothing
 * happens until the test runs the loop or moves its clock; a scripted downstream; the outcome of
 * every fragment by its id, every drained send as {@code tenant:records:status} and every lane
 * state change as {@code tenant STATE}. The queues outlive the lanes: {@link #closeLanes} and
 * {@link #open} again is a restart. Settings as {@link QueueLanesFixture}'s.
 */
@Timeout(value = 30, threadMode = ThreadMode.SEPARATE_THREAD)
abstract class SimulatedQueueLanesFixture {
  static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  /** Wall-clock milliseconds at simulated time zero, for the records' append times. */
  static final long T0 = 1_700_000_000_000L;

  final SimulatedLoop sim = new SimulatedLoop();
  final ScriptedSender downstream = new ScriptedSender();
  final InMemoryTenantQueues queues = new InMemoryTenantQueues(sim.loop());
  final Map<String, FragmentOutcome> outcomes = new LinkedHashMap<>();
  final List<String> drained = new ArrayList<>();
  final List<String> states = new ArrayList<>();

  /** Every send a 429 kept queued, as {@code tenant:series:status}. */
  final List<String> throttled = new ArrayList<>();

  Lanes lanes;

  /** The allocator of the lanes {@link #open} opens. */
  ByteBufAllocator alloc = QueueLanesFixture.ALLOC;

  /**
   * Opens lanes over {@link #queues}; those of tenants whose queue holds records start draining
   * once the loop runs.
   *
   * @param directTimeout {@code relay.delivery.queue.direct-timeout}; zero sends every fragment
   *     through the queue
   */
  Lanes open(Duration directTimeout) {
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
                directTimeout));
    return lanes;
  }

  /** Closes the lanes as a stopping relay does; the queues keep what they hold. */
  void closeLanes() {
    lanes.close();
    lanes = null;
    sim.runDue();
  }

  @AfterEach
  void closeEverything() {
    if (lanes != null) {
      lanes.close();
    }
    advance(60_000); // every send still out is answered, its buffers released
    assertFalse(sim.channel().finishAndReleaseAll());
  }

  /** A fragment of {@code tenant} whose bytes are {@code id}, its deadline 10 s from now. */
  Fragment fragment(String id, String tenant) {
    return LaneTesting.textFragment(id, tenant, id, sim.now() + 10 * SECOND, outcomes);
  }

  /** Hands the fragments to the lanes and runs what is due now. */
  void submit(Fragment... fragments) {
    lanes.submit(List.of(fragments));
    sim.runDue();
  }

  /** Submits fragment {@code id} of tenant a and moves the clock until it is answered. */
  FragmentOutcome answer(String id) {
    submit(fragment(id, "a"));
    advanceUntil(id + " answered", () -> outcomes.containsKey(id));
    return outcomes.get(id);
  }

  void advance(long millis) {
    sim.advance(Duration.ofMillis(millis));
  }

  /**
   * Moves the clock a millisecond at a time until {@code condition} holds, for at most a minute.
   */
  void advanceUntil(String what, BooleanSupplier condition) {
    for (int i = 0; !condition.getAsBoolean(); i++) {
      if (i == 60_000) {
        throw new AssertionError("not within a minute of simulated time: " + what);
      }
      advance(1);
    }
  }

  /** Simulated milliseconds since the start. */
  long nowMillis() {
    return TimeUnit.NANOSECONDS.toMillis(sim.now());
  }

  InMemoryTenantQueue queue(String tenant) {
    return queues.queue(tenant);
  }

  /** The bodies the downstream got for {@code tenant}, in order. */
  List<String> bodiesOf(String tenant) {
    List<String> bodies = new ArrayList<>();
    for (ScriptedSender.Call c : downstream.callsTo(tenant)) {
      bodies.add(c.text());
    }
    return bodies;
  }
}
