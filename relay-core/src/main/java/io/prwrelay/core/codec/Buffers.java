package io.prwrelay.core.codec;

import io.netty.buffer.ByteBuf;

/** Buffer helpers shared by the codecs. */
final class Buffers {
  private Buffers() {}

  /** Whether {@code in} is one direct memory region that native code can read in place. */
  static boolean isSingleDirect(ByteBuf in) {
    return in.isDirect() && in.nioBufferCount() == 1;
  }
}
