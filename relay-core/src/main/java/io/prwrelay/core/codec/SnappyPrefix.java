package io.prwrelay.core.codec;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * Decompresses only the start of a snappy block: for a reader that needs the first bytes of a large
 * block (the labels of a queued batch's first series) without paying for the rest. A plain
 * interpreter of the block's elements, stopping as soon as enough bytes are out; snappy-java has no
 * such call. Stateless and thread-safe.
 *
 * <pre>
 * | varint length | element | element | ...      element = tag byte, then
 *   tag &amp; 3 == 0  literal: length in the tag's upper 6 bits (+1), or in the 1-4 bytes after it
 *   tag &amp; 3 == 1  copy: length 4-11 in bits 2-4, offset in bits 5-7 and the next byte
 *   tag &amp; 3 == 2  copy: length in the upper 6 bits (+1), offset in the next 2 bytes
 *   tag &amp; 3 == 3  copy: length in the upper 6 bits (+1), offset in the next 4 bytes
 * </pre>
 */
public final class SnappyPrefix {
  private SnappyPrefix() {}

  /**
   * The first {@code min(maxBytes, declared length)} bytes the block decompresses to.
   *
   * @param in borrowed; the block between reader and writer index (left unchanged)
   * @return a heap buffer the caller owns and must release
   * @throws CodecException {@code CORRUPT} when the block is invalid before that many bytes are out
   */
  public static ByteBuf decode(ByteBuf in, int maxBytes, ByteBufAllocator alloc)
      throws CodecException {
    long declared = SnappyCodec.declaredLength(in);
    int want = (int) Math.min(declared, Math.max(0, maxBytes));
    ByteBuf out = alloc.heapBuffer(want, want);
    boolean ok = false;
    try {
      byte[] o = out.array();
      int base = out.arrayOffset();
      int n = 0;
      int i = in.readerIndex();
      while ((in.getByte(i++) & 0x80) != 0) {
        // the length preamble, valid (declaredLength read it)
      }
      int end = in.writerIndex();
      while (n < want) {
        if (i >= end) {
          throw corrupt("block ends after " + n + " of " + declared + " bytes");
        }
        int tag = in.getByte(i++) & 0xFF;
        int length;
        int offset;
        switch (tag & 3) {
          case 0 -> {
            length = tag >>> 2;
            if (length >= 60) {
              int extra = length - 59;
              if (i + extra > end) {
                throw corrupt("truncated literal length");
              }
              length = 0;
              for (int k = 0; k < extra; k++) {
                length |= (in.getByte(i + k) & 0xFF) << (8 * k);
              }
              i += extra;
            }
            length++;
            int copy = Math.min(length, want - n);
            if (length <= 0 || i + copy > end) {
              throw corrupt("literal runs past the block");
            }
            in.getBytes(i, o, base + n, copy);
            n += copy;
            i += length;
            continue;
          }
          case 1 -> {
            if (i >= end) {
              throw corrupt("truncated copy");
            }
            length = ((tag >>> 2) & 7) + 4;
            offset = ((tag >>> 5) << 8) | (in.getByte(i++) & 0xFF);
          }
          case 2 -> {
            if (i + 2 > end) {
              throw corrupt("truncated copy");
            }
            length = (tag >>> 2) + 1;
            offset = in.getUnsignedShortLE(i);
            i += 2;
          }
          default -> {
            if (i + 4 > end) {
              throw corrupt("truncated copy");
            }
            length = (tag >>> 2) + 1;
            offset = in.getIntLE(i);
            i += 4;
          }
        }
        if (offset <= 0 || offset > n) {
          throw corrupt("copy offset " + offset + " outside the " + n + " bytes out");
        }
        int copy = Math.min(length, want - n);
        for (int k = 0; k < copy; k++) {
          o[base + n + k] = o[base + n + k - offset]; // overlapping copies repeat bytes
        }
        n += copy;
      }
      out.writerIndex(want);
      ok = true;
      return out;
    } finally {
      if (!ok) {
        out.release();
      }
    }
  }

  private static CodecException corrupt(String message) {
    return new CodecException(CodecException.Problem.CORRUPT, "invalid snappy block: " + message);
  }
}
