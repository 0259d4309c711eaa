package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.codec.SnappyPrefix;
import io.prwrelay.core.remotewrite.HaLabels;
import io.prwrelay.server.protocol.Protocol;

/**
 * Reads the key the downstream judges a batch by ({@link HaLabels}) from a fragment or a queued
 * record, once each: functions of their arguments. A fragment's key is read from its uncompressed
 * body; a snappy block's (a sender body forwarded as it came, a queued record) from the start of
 * the block only ({@link SnappyPrefix}: {@value #PREFIX_BYTES} bytes hold the first series of any
 * usual request, {@value #MAX_PREFIX_BYTES} at most), into a buffer freed before returning.
 */
final class HaKeys {
  private HaKeys() {}

  /** Bytes of a block decompressed first to find its first series. */
  static final int PREFIX_BYTES = 4096;

  /**
   * Most bytes of a block decompressed to find its first series: a first series longer than this
   * (labels and samples) leaves the block's key unknown, and the block travels alone.
   */
  static final int MAX_PREFIX_BYTES = 64 << 10;

  /**
   * Reads the fragment's key. A PRW 2.0 fragment travels alone: its key is {@link HaLabels#UNKNOWN}
   * until it is converted to PRW 1.0 ({@link #convertedToV1}).
   */
  static void judge(Fragment f, HaLabels ha, ByteBufAllocator alloc) {
    if (f.haKeyRead()) {
      return;
    }
    if (f.protocol() != Protocol.V1) {
      f.judgedBy(HaLabels.UNKNOWN);
    } else if (f.body() != null) {
      f.judgedBy(ha.keyOf(f.body()));
    } else if (f.compressed() != null) {
      f.judgedBy(ofBlock(f.compressed(), ha, alloc));
    } else {
      f.judgedBy(f.haKey());
    }
  }

  /**
   * The key of a snappy block of a PRW 1.0 request, from its first {@value #PREFIX_BYTES} bytes,
   * else its first {@value #MAX_PREFIX_BYTES}; {@link HaLabels#UNKNOWN} (joined with nothing) when
   * the block is not valid or its first series does not end within them. What is decompressed for
   * it is freed before this returns.
   *
   * @param block borrowed
   */
  static long ofBlock(ByteBuf block, HaLabels ha, ByteBufAllocator alloc) {
    try {
      long declared = SnappyCodec.declaredLength(block);
      long key = start(block, ha, declared, PREFIX_BYTES, alloc);
      return key != HaLabels.UNKNOWN || declared <= PREFIX_BYTES
          ? key
          : start(block, ha, declared, MAX_PREFIX_BYTES, alloc);
    } catch (CodecException | RuntimeException e) {
      return HaLabels.UNKNOWN;
    }
  }

  /** The key read from the block's first {@code bytes}, which hold all of it when it is short. */
  private static long start(
      ByteBuf block, HaLabels ha, long declared, int bytes, ByteBufAllocator alloc)
      throws CodecException {
    ByteBuf plain = SnappyPrefix.decode(block, bytes, alloc);
    try {
      return declared <= bytes ? ha.keyOf(plain) : ha.keyOfPrefix(plain);
    } finally {
      plain.release();
    }
  }
}
