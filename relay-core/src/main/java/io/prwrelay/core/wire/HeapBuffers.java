package io.prwrelay.core.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The readers work on a {@code byte[]}: this gives them one for any {@link ByteBuf}, in place when
 * the buffer has a backing array, otherwise as one temporary heap copy. Shared by the routers, the
 * PRW 2.0 to 1.0 converter and the codecs.
 */
public final class HeapBuffers {
  private HeapBuffers() {}

  /**
   * Returns {@code in} itself when it exposes a backing array, otherwise a heap copy of its
   * readable bytes that the caller must release (compare with {@code != in}). Either way the bytes
   * are {@code array()[arrayOffset() + readerIndex(), + readableBytes())}.
   *
   * @param in borrowed
   * @param alloc allocator of the copy
   */
  public static ByteBuf heap(ByteBuf in, ByteBufAllocator alloc) {
    if (in.hasArray()) {
      return in;
    }
    int n = in.readableBytes();
    ByteBuf copy = alloc.heapBuffer(n, n);
    copy.writeBytes(in, in.readerIndex(), n);
    return copy;
  }

  /** Index in {@code heap.array()} of the first readable byte of a buffer from {@link #heap}. */
  public static int arrayStart(ByteBuf heap) {
    return heap.arrayOffset() + heap.readerIndex();
  }
}
