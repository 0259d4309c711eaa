package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.SimulatedLoop;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Memory running out while a lane builds a request body (an {@link OutOfMemoryError} from the
 * compressor's allocation) answers the fragments 503 and releases their buffers: an {@code Error}
 * never leaks what a fragment holds.
 */
class LaneOutOfMemoryTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  /** Delegates to the pooled allocator, but has no memory for buffers of {@code failAt} or more. */
  private static final class ScarceAllocator extends AbstractByteBufAllocator {
    private final int failAt;

    ScarceAllocator(int failAt) {
      super(false);
      this.failAt = failAt;
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      check(initialCapacity);
      return PooledByteBufAllocator.DEFAULT.heapBuffer(initialCapacity, maxCapacity);
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      check(initialCapacity);
      return PooledByteBufAllocator.DEFAULT.directBuffer(initialCapacity, maxCapacity);
    }

    @Override
    public boolean isDirectBufferPooled() {
      return true;
    }

    private void check(int size) {
      if (size >= failAt) {
        throw new OutOfMemoryError("Cannot reserve " + size + " bytes of direct buffer memory");
      }
    }
  }

  @Test
  void aBatchThatCannotBeCompressedForWantOfMemoryIsAnswered503AndReleased() {
    SimulatedLoop sim = new SimulatedLoop();
    ScriptedSender downstream = new ScriptedSender();
    ByteBufAllocator alloc = new ScarceAllocator(FragmentCompression.IN_LANE_BELOW);
    Lanes lanes =
        new Lanes(
            List.of(sim.loop()),
            LaneTesting.settings(1, 1 << 20, 1 << 20, 5),
            downstream,
            alloc,
            LaneObserver.NONE,
            null);
    Map<String, FragmentOutcome> outcomes = new LinkedHashMap<>();
    ByteBuf large = PooledByteBufAllocator.DEFAULT.directBuffer(64 * 1024);
    large.writeZero(64 * 1024);
    Fragment big =
        new Fragment(
            "a",
            large,
            new SeriesCounts(1, 1, 0, 0),
            sim.now() + 10 * SECOND,
            LaneTesting.answeredOnce(outcomes, "big"));
    Fragment small = LaneTesting.textFragment("small", "a", "s", sim.now() + 10 * SECOND, outcomes);
    downstream.script("a", ScriptedSender.Reply.status(200));

    lanes.submit(List.of(big, small));
    sim.advance(Duration.ofMillis(100));

    assertEquals(503, outcomes.get("big").status(), outcomes.toString());
    assertTrue(outcomes.get("big").message().contains("out of memory"), outcomes.toString());
    assertEquals(0, large.refCnt(), "the batch that could not be compressed is released");
    assertEquals(FragmentOutcome.Kind.DELIVERED, outcomes.get("small").kind(), "others go on");
    lanes.close();
  }
}
