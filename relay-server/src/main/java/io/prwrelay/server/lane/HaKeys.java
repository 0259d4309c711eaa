package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.codec.SnappyPrefix;
import io.prwrelay.core.remotewrite.HaLabels;
import io.prwrelay.server.downstream.Protocol;

/**
 * Reads the key the downstream judges a batch by ({@link HaLabels}) from a fragment or a queued
 * record, once each: functions of their arguments. A fragment's key is read from its uncompressed
 * body; a snappy block's (a sender body forwarded as it came, a queued record) from the start of
 * the block only ({@link SnappyPrefix}: {@value #PREFIX_BYTES} bytes hold the first series of any
 * usual request), and from the whole block, decompressed into a buffer freed before returning, only
 * when its first series does not fit in them.
 */
final class HaKeys {
  private HaKeys() {}

  /** Bytes of a block decompressed first to find its first series. */
  static final int PREFIX_BYTES = 4096;

  /**
   * Reads the fragment's key. A PRW 2.0 fragment travels alone: its key is {@link HaLabels#UNKNOWN}
   * until it is converted to PRW 1.0 ({@link #convertedToV1}).
   */
  static void judge(Fragment f, HaLabels ha, ByteBufAllocator alloc) {
    if (f.haKeyRead) {
      return;
    }
    f.haKeyRead = true;
    if (f.protocol() != Protocol.V1) {
      f.haKey = HaLabels.UNKNOWN;
    } else if (f.body() != null) {
      f.haKey = ha.keyOf(f.body());
    } else if (f.compressed() != null) {
      f.haKey = ofBlock(f.compressed(), ha, f.size(), alloc);
    }
  }

  /**
   * The key of a snappy block of a PRW 1.0 request; {@link HaLabels#UNKNOWN} (joined with nothing)
   * when the block is not valid or decompresses to more than {@code maxBytes}.
   *
   * @param block borrowed
   */
  static long ofBlock(ByteBuf block, HaLabels ha, int maxBytes, ByteBufAllocator alloc) {
    try {
      long declared = SnappyCodec.declaredLength(block);
      if (declared <= PREFIX_BYTES) {
        return whole(block, ha, PREFIX_BYTES, alloc);
      }
      ByteBuf prefix = SnappyPrefix.decode(block, PREFIX_BYTES, alloc);
      long key;
      try {
        key = ha.keyOfPrefix(prefix);
      } finally {
        prefix.release();
      }
      if (key != HaLabels.UNKNOWN || declared > maxBytes) {
        return key;
      }
      return whole(block, ha, (int) declared, alloc);
    } catch (CodecException | RuntimeException e) {
      return HaLabels.UNKNOWN;
    }
  }

  private static long whole(ByteBuf block, HaLabels ha, int bytes, ByteBufAllocator alloc)
      throws CodecException {
    ByteBuf plain = SnappyPrefix.decode(block, bytes, alloc);
    try {
      return ha.keyOf(plain);
    } finally {
      plain.release();
    }
  }
}
