package io.prwrelay.testing;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;

/** An allocator that fails the test on any allocation: proves a check happens before allocating. */
public final class NoAllocationAllocator extends AbstractByteBufAllocator {
  @Override
  protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
    throw new AssertionError("allocated a heap buffer of " + initialCapacity + " bytes");
  }

  @Override
  protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
    throw new AssertionError("allocated a direct buffer of " + initialCapacity + " bytes");
  }

  @Override
  public boolean isDirectBufferPooled() {
    return false;
  }
}
