package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.FastThreadLocal;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.encode.V2ToV1Converter;
import io.prwrelay.core.wire.ScratchMemory;

/**
 * Converts a PRW 2.0 tenant batch to PRW 1.0 for a downstream that takes only 1.0 (the {@code auto}
 * protocol after a 415), with one reusable {@link V2ToV1Converter} per event loop thread. Its
 * scratch arrays go back to their initial sizes after a conversion that grew them beyond {@link
 * ScratchMemory#RETAINED_BYTES}; the output, at most {@code relay.server.max-decompressed-bytes},
 * is the batch's new body in place of the PRW 2.0 one.
 */
final class V1Conversion {
  private static final FastThreadLocal<Converter> CONVERTER =
      new FastThreadLocal<>() {
        @Override
        protected Converter initialValue() {
          return new Converter(new ScratchMemory());
        }
      };

  /** A thread's converter and the scratch memory its arrays grow in. */
  private record Converter(ScratchMemory scratch, V2ToV1Converter converter) {
    Converter(ScratchMemory scratch) {
      this(scratch, new V2ToV1Converter(scratch));
    }
  }

  private V1Conversion() {}

  /**
   * @param v2 borrows the uncompressed PRW 2.0 request
   * @param maxBytes most bytes the PRW 1.0 request may take; a larger one is a {@link
   *     io.prwrelay.core.remotewrite.RequestError.Kind#TOO_LARGE} error, sized before allocating
   * @return the conversion, whose content the caller owns
   */
  static V2ToV1Converter.Conversion of(ByteBuf v2, ByteBufAllocator alloc, int maxBytes) {
    Converter c = CONVERTER.get();
    try {
      return c.converter().convert(v2, alloc, maxBytes);
    } finally {
      c.scratch().finish();
    }
  }

  /**
   * {@link #of} for a PRW 2.0 request held as one snappy block.
   *
   * @param block borrowed
   * @param maxDecompressed most bytes the block may decompress to
   * @param maxBytes most bytes the PRW 1.0 request may take
   * @return the conversion, whose content (uncompressed) the caller owns
   */
  static V2ToV1Converter.Conversion ofBlock(
      ByteBuf block, ByteBufAllocator alloc, int maxDecompressed, int maxBytes)
      throws CodecException {
    ByteBuf plain = SnappyCodec.decode(block, alloc, maxDecompressed);
    try {
      return of(plain, alloc, maxBytes);
    } finally {
      plain.release();
    }
  }
}
