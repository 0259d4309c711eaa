package io.prwrelay.server.write;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * An unpooled allocator that remembers every buffer it made, so a test can check that each was
 * released; or, {@link #failingWith failing}, one whose heap buffers fail as an allocation inside
 * the relay might.
 */
final class TrackingAllocator extends AbstractByteBufAllocator {
  private final List<ByteBuf> made = new ArrayList<>();
  private Throwable failure;

  TrackingAllocator() {
    super(false);
  }

  /** This allocator, failing every heap buffer from now on with {@code t}. */
  TrackingAllocator failingWith(Throwable t) {
    failure = t;
    return this;
  }

  @Override
  protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
    if (failure instanceof Error e) {
      throw e;
    }
    if (failure != null) {
      throw (RuntimeException) failure;
    }
    return track(new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity));
  }

  @Override
  protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
    return track(new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity));
  }

  private ByteBuf track(ByteBuf b) {
    made.add(b);
    return b;
  }

  @Override
  public boolean isDirectBufferPooled() {
    return false;
  }

  /** Buffers made so far. */
  int allocated() {
    return made.size();
  }

  /** Asserts that every buffer made so far was released. */
  void assertAllReleased() {
    for (ByteBuf b : made) {
      assertEquals(0, b.refCnt(), "every buffer made for the request is released");
    }
  }
}
