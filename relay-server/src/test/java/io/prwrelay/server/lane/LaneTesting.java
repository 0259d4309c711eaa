package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoop;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.SimulatedLoop;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Settings, fragments, listeners and the teardown the lane tests share. */
final class LaneTesting {
  private LaneTesting() {}

  /**
   * The first of {@code prefix}, {@code prefix1}, {@code prefix2}, … whose lane lives on loop
   * {@code loop} of {@code loops}: which loop a tenant's lane lives on follows a hash seeded anew
   * in every process, so a test that needs two tenants on one loop picks them this way.
   */
  static String tenantOnLoop(String prefix, int loop, int loops) {
    for (int i = 0; ; i++) {
      String tenant = i == 0 ? prefix : prefix + i;
      if (Lanes.shardOf(tenant, loops) == loop) {
        return tenant;
      }
    }
  }

  /**
   * Which loop sent each downstream request of {@code tenant}, in order: "R" {@code routing}, "H"
   * {@code home}, "?" another.
   */
  static String sentFrom(
      ScriptedSender downstream, String tenant, SimulatedLoop routing, SimulatedLoop home) {
    StringBuilder b = new StringBuilder();
    for (ScriptedSender.Call c : downstream.callsTo(tenant)) {
      EventLoop l = c.loop();
      b.append(l == routing.loop() ? "R" : l == home.loop() ? "H" : "?");
    }
    return b.toString();
  }

  /**
   * A lane test's teardown: lets ten simulated minutes pass on {@code loops} (every send still out
   * answered, every backoff and idle timer fired), closes {@code lanes} when the test made them,
   * and fails if any loop's channel still holds a message.
   */
  static void settleAndClose(Lanes lanes, SimulatedLoop... loops) {
    for (int i = 0; i < 10; i++) {
      SimulatedLoop.advance(Duration.ofMinutes(1), loops);
    }
    if (lanes != null) {
      lanes.close();
    }
    for (SimulatedLoop loop : loops) {
      assertFalse(loop.channel().finishAndReleaseAll());
    }
  }

  /** Largest PRW 1.0 request a lane makes by converting a PRW 2.0 batch in these tests. */
  static final int MAX_CONVERTED = 16 << 20;

  /**
   * Lane settings with up to {@code maxConcurrent} sends, {@code maxPending} waiting bytes and
   * requests of up to {@code batchMax} bytes, lingering {@code lingerMs}; lanes idle for 5 minutes
   * are forgotten, at most 1000 of them; backoff from 100 ms to 2 s, attempts of 5 s; conversions
   * to PRW 1.0 of at most {@link #MAX_CONVERTED} bytes.
   */
  static LaneSettings settings(int maxConcurrent, long maxPending, int batchMax, long lingerMs) {
    return settings(
        maxConcurrent,
        maxPending,
        batchMax,
        lingerMs,
        Duration.ofMillis(100),
        Duration.ofSeconds(2),
        Duration.ofSeconds(5));
  }

  /** {@link #settings(int, long, int, long)} with another backoff and attempt timeout. */
  static LaneSettings settings(
      int maxConcurrent,
      long maxPending,
      int batchMax,
      long lingerMs,
      Duration initialBackoff,
      Duration maxBackoff,
      Duration attemptTimeout) {
    return new LaneSettings(
        maxConcurrent,
        maxPending,
        batchMax,
        Duration.ofMillis(lingerMs),
        Duration.ofMinutes(5),
        1000,
        initialBackoff,
        maxBackoff,
        attemptTimeout,
        MAX_CONVERTED);
  }

  /**
   * An observer that adds "tenant:records:status" to {@code drained} for each drained queue
   * request, "tenant:series:status" to {@code throttled} for each throttled queued send and, when
   * {@code states} is not null, "tenant STATE" to it at each lane state change.
   */
  static LaneObserver recording(List<String> drained, List<String> throttled, List<String> states) {
    return new LaneObserver() {
      @Override
      public void drained(String tenant, long records, long series, AttemptOutcome o) {
        drained.add(tenant + ":" + records + ":" + o.status());
      }

      @Override
      public void throttledQueued(String tenant, long series, AttemptOutcome o) {
        throttled.add(tenant + ":" + series + ":" + o.status());
      }

      @Override
      public void stateChanged(String tenant, Lane.State state, String reason, long delayNanos) {
        if (states != null) {
          states.add(tenant + " " + state);
        }
      }
    };
  }

  /**
   * A listener that records the outcome of fragment {@code id} in {@code outcomes}, failing when
   * the fragment still holds its body (it is released before the listener is told) or was answered
   * before.
   */
  static Fragment.Listener answeredOnce(Map<String, FragmentOutcome> outcomes, String id) {
    return (f, o) -> {
      assertNull(f.body(), "released before the listener is told");
      assertNull(outcomes.put(id, o), id + " answered twice");
    };
  }

  /**
   * A PRW 1.0 fragment of one series whose bytes are {@code text} (in a pooled heap buffer),
   * answered once into {@code outcomes} under {@code id}.
   */
  static Fragment textFragment(
      String id,
      String tenant,
      String text,
      long deadlineNanos,
      Map<String, FragmentOutcome> outcomes) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    return new Fragment(
        tenant,
        PooledByteBufAllocator.DEFAULT.heapBuffer(bytes.length).writeBytes(bytes),
        new SeriesCounts(1, 1, 0, 0),
        deadlineNanos,
        answeredOnce(outcomes, id));
  }

  /**
   * A PRW 1.0 fragment of one series whose bytes are {@code id}, from {@code sender}'s request
   * ({@link Fragment.Listener#sender()}), answered once into {@code outcomes} under {@code id}.
   */
  static Fragment senderFragment(
      String id,
      String tenant,
      Object sender,
      long deadlineNanos,
      Map<String, FragmentOutcome> outcomes) {
    byte[] bytes = id.getBytes(StandardCharsets.UTF_8);
    Fragment.Listener recorded = answeredOnce(outcomes, id);
    return new Fragment(
        tenant,
        PooledByteBufAllocator.DEFAULT.heapBuffer(bytes.length).writeBytes(bytes),
        new SeriesCounts(1, 1, 0, 0),
        deadlineNanos,
        new Fragment.Listener() {
          @Override
          public void done(Fragment f, FragmentOutcome o) {
            recorded.done(f, o);
          }

          @Override
          public Object sender() {
            return sender;
          }
        });
  }

  /**
   * A PRW 1.0 fragment as a forwarded sender body ({@link Fragment#ofBlock}): one series whose
   * bytes are {@code text}, held as a snappy block of one literal (in a pooled heap buffer),
   * answered once into {@code outcomes} under {@code id}.
   */
  static Fragment forwardedFragment(
      String id,
      String tenant,
      String text,
      long deadlineNanos,
      Map<String, FragmentOutcome> outcomes) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > 60) {
      throw new IllegalArgumentException("one short literal: at most 60 bytes");
    }
    io.netty.buffer.ByteBuf block =
        PooledByteBufAllocator.DEFAULT
            .heapBuffer(bytes.length + 2)
            .writeByte(bytes.length) // the length preamble
            .writeByte((bytes.length - 1) << 2) // a literal of that many bytes
            .writeBytes(bytes);
    return Fragment.ofBlock(
        tenant,
        io.prwrelay.server.protocol.Protocol.V1,
        block,
        bytes.length,
        new SeriesCounts(1, 1, 0, 0),
        deadlineNanos,
        answeredOnce(outcomes, id));
  }

  /** An observer that adds "tenant STATE" to {@code events} at each lane state change. */
  static LaneObserver statesInto(List<String> events) {
    return new LaneObserver() {
      @Override
      public void stateChanged(String tenant, Lane.State state, String reason, long delay) {
        events.add(tenant + " " + state);
      }
    };
  }
}
