package io.prwrelay.core.route;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.RawProto.sample;
import static io.prwrelay.testing.RawProto.series;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.prwrelay.core.encode.BatchEncoder;
import io.prwrelay.core.encode.TenantBatch;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The buffers a request's tenant batches live in: small batches share one, released with the last
 * of them; large batches have their own.
 */
class BatchBuffersTest {
  private static final byte[] SMALL_A = series(label("service_id", "a"), sample(1, 1));
  private static final byte[] SMALL_B = series(label("service_id", "b"), sample(2, 2));
  private static final byte[] SMALL_C = series(label("service_id", "c"), sample(3, 3));
  private static final byte[] LARGE =
      series(
          label("service_id", "big"),
          label("padding", "x".repeat(BatchEncoder.SMALL_BATCH_BYTES)),
          sample(4, 4));

  @Test
  void smallBatchesShareOneBufferFreedWithTheLastOfThem() {
    TenantRouter router = new TenantRouter(TenantRules.builder().build());
    ByteBuf in = Unpooled.wrappedBuffer(cat(SMALL_A, LARGE, SMALL_B, SMALL_C));
    RouteResult result = router.route(in, PooledByteBufAllocator.DEFAULT);
    Map<String, ByteBuf> taken = new HashMap<>();
    try {
      for (TenantBatch b : result.batches()) {
        taken.put(b.tenant(), b.takeContent());
      }
    } finally {
      result.clear();
      in.release();
    }
    assertEquals(4, taken.size());
    ByteBuf shared = root(taken.get("a"));
    assertNotSame(shared, taken.get("a"), "a small batch is a slice of a shared buffer");
    assertSame(shared, root(taken.get("b")));
    assertSame(shared, root(taken.get("c")));
    assertNotSame(shared, root(taken.get("big")), "a large batch has a buffer of its own");
    assertEquals(3, shared.refCnt(), "one reference per small batch");

    assertArrayEquals(LARGE, bytes(taken.get("big")));
    taken.get("big").release();
    assertArrayEquals(SMALL_A, bytes(taken.get("a")));
    taken.get("a").release();
    assertArrayEquals(SMALL_C, bytes(taken.get("c")));
    taken.get("c").release();
    assertEquals(1, shared.refCnt(), "the last small batch keeps the shared buffer");
    assertArrayEquals(SMALL_B, bytes(taken.get("b")), "and its bytes are intact");
    taken.get("b").release();
    assertEquals(0, shared.refCnt());
  }

  @Test
  void aFailedAllocationLeavesNoBufferBehind() {
    // The shared buffer is allocated after the large batch's: failing it must release that one.
    CountingAllocator alloc = new CountingAllocator(2);
    TenantRouter router = new TenantRouter(TenantRules.builder().build());
    ByteBuf in = Unpooled.wrappedBuffer(cat(SMALL_A, LARGE, SMALL_B));
    try {
      assertThrows(OutOfMemoryError.class, () -> router.route(in, alloc));
    } finally {
      in.release();
    }
    assertEquals(1, alloc.made.size(), "the large batch's buffer was made");
    assertEquals(0, alloc.made.get(0).refCnt(), "and released when the shared one failed");

    CountingAllocator fine = new CountingAllocator(Integer.MAX_VALUE);
    ByteBuf again = Unpooled.wrappedBuffer(cat(SMALL_A, LARGE, SMALL_B));
    RouteResult result = router.route(again, fine);
    try {
      assertEquals(3, result.batches().size());
      assertEquals(2, fine.made.size(), "one buffer for the large batch, one for both small ones");
    } finally {
      result.clear();
      again.release();
    }
    for (ByteBuf b : fine.made) {
      assertEquals(0, b.refCnt());
    }
  }

  /** The buffer that owns the memory, past leak-tracking wrappers and slices. */
  private static ByteBuf root(ByteBuf b) {
    while (b.unwrap() != null) {
      b = b.unwrap();
    }
    return b;
  }

  private static byte[] bytes(ByteBuf b) {
    return ByteBufUtil.getBytes(b);
  }

  /** Makes unpooled direct buffers and remembers them; the {@code failAt}-th one fails. */
  private static final class CountingAllocator extends AbstractByteBufAllocator {
    final List<ByteBuf> made = new ArrayList<>();
    private final int failAt;

    CountingAllocator(int failAt) {
      super(true);
      this.failAt = failAt;
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      if (made.size() + 1 == failAt) {
        throw new OutOfMemoryError("test: no memory for buffer " + failAt);
      }
      ByteBuf b = new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity);
      made.add(b);
      return b;
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      ByteBuf b = new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
      made.add(b);
      return b;
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }
  }
}
