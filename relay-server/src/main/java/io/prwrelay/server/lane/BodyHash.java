package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;

/**
 * XXH64 (seed 0) of a buffer's readable bytes: the key under which the {@link DeliveryLedger}
 * remembers which tenants of a request body were delivered. 64 bits plus the body length make an
 * accidental match between two different bodies within the ledger's lifetime negligible; a match
 * between identical bodies is what the ledger is for.
 */
public final class BodyHash {
  private static final long P1 = 0x9E3779B185EBCA87L;
  private static final long P2 = 0xC2B2AE3D27D4EB4FL;
  private static final long P3 = 0x165667B19E3779F9L;
  private static final long P4 = 0x85EBCA77C2B2AE63L;
  private static final long P5 = 0x27D4EB2F165667C5L;

  private BodyHash() {}

  /**
   * Hashes the readable bytes of {@code buf}.
   *
   * @param buf borrowed; indexes are left unchanged
   */
  public static long xxh64(ByteBuf buf) {
    int i = buf.readerIndex();
    final int end = buf.writerIndex();
    final int length = end - i;
    long h;
    if (length >= 32) {
      long v1 = P1 + P2;
      long v2 = P2;
      long v3 = 0;
      long v4 = -P1;
      int limit = end - 32;
      do {
        v1 = round(v1, buf.getLongLE(i));
        v2 = round(v2, buf.getLongLE(i + 8));
        v3 = round(v3, buf.getLongLE(i + 16));
        v4 = round(v4, buf.getLongLE(i + 24));
        i += 32;
      } while (i <= limit);
      h =
          Long.rotateLeft(v1, 1)
              + Long.rotateLeft(v2, 7)
              + Long.rotateLeft(v3, 12)
              + Long.rotateLeft(v4, 18);
      h = merge(h, v1);
      h = merge(h, v2);
      h = merge(h, v3);
      h = merge(h, v4);
    } else {
      h = P5;
    }
    h += length;
    while (i + 8 <= end) {
      h ^= round(0, buf.getLongLE(i));
      h = Long.rotateLeft(h, 27) * P1 + P4;
      i += 8;
    }
    if (i + 4 <= end) {
      h ^= (buf.getIntLE(i) & 0xFFFF_FFFFL) * P1;
      h = Long.rotateLeft(h, 23) * P2 + P3;
      i += 4;
    }
    while (i < end) {
      h ^= (buf.getByte(i) & 0xFFL) * P5;
      h = Long.rotateLeft(h, 11) * P1;
      i++;
    }
    h ^= h >>> 33;
    h *= P2;
    h ^= h >>> 29;
    h *= P3;
    h ^= h >>> 32;
    return h;
  }

  private static long round(long acc, long input) {
    acc += input * P2;
    acc = Long.rotateLeft(acc, 31);
    return acc * P1;
  }

  private static long merge(long h, long v) {
    h ^= round(0, v);
    return h * P1 + P4;
  }
}
