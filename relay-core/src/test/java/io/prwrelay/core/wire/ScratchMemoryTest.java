package io.prwrelay.core.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.prwrelay.core.codec.MemoryGrant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The arithmetic of scratch memory: growth up to the retained bytes is free and stays, growth
 * beyond is asked of the request's grant as one total before the array is allocated, a refused
 * growth changes nothing, and the end of a request that grew beyond the retained bytes puts every
 * owner back to its initial sizes.
 */
class ScratchMemoryTest {
  /** Records every ask and grants up to {@code limit} bytes. */
  private static final class Grant implements MemoryGrant {
    final List<Long> asks = new ArrayList<>();
    final long limit;

    Grant(long limit) {
      this.limit = limit;
    }

    @Override
    public boolean reserve(long bytes) {
      asks.add(bytes);
      return bytes <= limit;
    }
  }

  @Test
  void growthWithinTheRetainedBytesIsFreeAndStaysBetweenRequests() {
    ScratchMemory scratch = new ScratchMemory(1000);
    int[] trims = new int[1];
    scratch.register(() -> trims[0]++);
    Grant grant = new Grant(0);
    scratch.start(grant);
    int[] a = scratch.grow(new int[10], 200); // 760 bytes more
    assertEquals(200, a.length);
    scratch.finish();
    assertEquals(List.of(), grant.asks, "nothing asked within the retained bytes");
    assertEquals(760, scratch.grownBytes());
    assertEquals(0, trims[0], "kept for the next request");
  }

  @Test
  void growthBeyondTheRetainedBytesIsAskedAsOneTotalAndGivenBackAtTheEnd() {
    ScratchMemory scratch = new ScratchMemory(1000);
    int[] trims = new int[1];
    scratch.register(() -> trims[0]++);
    Grant grant = new Grant(Long.MAX_VALUE);
    scratch.start(grant);
    int[] ints = scratch.grow(new int[0], 200); // 800: free
    long[] longs = scratch.grow(new long[0], 100); // 800 more: 600 beyond
    int[] fresh = scratch.replace(ints, 300); // 400 more: 1000 beyond
    scratch.charge(24); // parallel arrays grown at once: 1024 beyond
    assertEquals(List.of(600L, 1000L, 1024L), grant.asks, "the total beyond, each time");
    assertEquals(200, ints.length);
    assertEquals(100, longs.length);
    assertEquals(300, fresh.length);
    assertEquals(2024, scratch.grownBytes());
    scratch.finish();
    assertEquals(1, trims[0], "every owner back to its initial sizes");
    assertEquals(0, scratch.grownBytes());

    // The next request starts from nothing grown: its own growth beyond is its own.
    Grant next = new Grant(Long.MAX_VALUE);
    scratch.start(next);
    scratch.grow(new int[0], 300);
    assertEquals(List.of(200L), next.asks);
  }

  @Test
  void aRefusedGrowthThrowsAndCountsNothing() {
    ScratchMemory scratch = new ScratchMemory(100);
    Grant grant = new Grant(50);
    scratch.start(grant);
    scratch.grow(new int[0], 30); // 120: 20 beyond, granted
    ScratchMemory.Refused refused =
        assertThrows(ScratchMemory.Refused.class, () -> scratch.grow(new int[0], 10));
    assertEquals(List.of(20L, 60L), grant.asks);
    assertEquals(120, scratch.grownBytes(), "the refused growth is not counted");
    assertSame(
        refused,
        assertThrows(ScratchMemory.Refused.class, () -> scratch.charge(1000)),
        "one shared instance, no stack trace");
    assertEquals(0, refused.getStackTrace().length);
  }

  @Test
  void withoutARequestTheGrowthIsGrantedAndStillGivenBackAtTheEnd() {
    ScratchMemory scratch = new ScratchMemory(0);
    int[] trims = new int[1];
    scratch.register(() -> trims[0]++);
    scratch.grow(new int[0], 1 << 20);
    assertEquals(4 << 20, scratch.grownBytes());
    scratch.finish();
    assertEquals(1, trims[0]);
    assertEquals(0, scratch.grownBytes());
  }
}
