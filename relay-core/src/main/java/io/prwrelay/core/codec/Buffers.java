package io.prwrelay.core.codec;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/** Buffer helpers shared by the codecs. */
final class Buffers {
  private Buffers() {}

  /**
   * Returns {@code in} itself when it exposes a backing array, otherwise a heap copy of its
   * readable bytes that the caller must release (compare with {@code != in}).
   *
   * @param in borrowed
   */
  static ByteBuf heap(ByteBuf in, ByteBufAllocator alloc) {
    if (in.hasArray()) {
      return in;
    }
    int n = in.readableBytes();
    ByteBuf copy = alloc.heapBuffer(n, n);
    copy.writeBytes(in, in.readerIndex(), n);
    return copy;
  }

  /** Whether {@code in} is one direct memory region that native code can read in place. */
  static boolean isSingleDirect(ByteBuf in) {
    return in.isDirect() && in.nioBufferCount() == 1;
  }
}
