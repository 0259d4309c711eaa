package io.prwrelay.core.route;

import io.prwrelay.core.wire.WireTags;

/**
 * Bounds-checked protobuf field walking over a {@code byte[]}, for the few places that read a field
 * the reader skipped (a series' {@code __name__} in an unusual encoding, a metadata entry's family
 * name) off the hot path. Results are packed in a {@code long}: the index after what was read in
 * the high 32 bits, a value in the low 32 bits; -1 when the bytes cannot be read.
 */
final class RawFields {
  /** Deepest nesting of groups skipped, as the reader allows. */
  private static final int MAX_GROUP_DEPTH = 32;

  private RawFields() {}

  /** The index packed by a successful read. */
  static int next(long packed) {
    return (int) (packed >>> 32);
  }

  /** The value packed by a successful read (unsigned 32 bits for a tag). */
  static int value(long packed) {
    return (int) packed;
  }

  /**
   * The varint at {@code pos} (up to 10 bytes, padded or not), or -1 when it runs past {@code
   * limit} or does not fit in 32 bits.
   */
  static long varint(byte[] a, int pos, int limit) {
    long value = 0;
    for (int shift = 0; shift < 70 && pos < limit; shift += 7) {
      byte b = a[pos++];
      if (shift < 64) {
        value |= (long) (b & 0x7F) << shift;
      }
      if (b >= 0) {
        return (value >>> 32) != 0 ? -1 : ((long) pos << 32) | value;
      }
    }
    return -1;
  }

  /**
   * The length-delimited field body after a tag at {@code pos} (its length read): the body's first
   * index packed with its length, or -1 when the length runs past {@code limit}.
   */
  static long body(byte[] a, int pos, int limit) {
    long n = varint(a, pos, limit);
    if (n < 0 || value(n) < 0 || value(n) > limit - next(n)) {
      return -1;
    }
    return n;
  }

  /**
   * Skips the value of a field with tag {@code tag} starting at {@code pos}: the index after it, or
   * -1 when it cannot be skipped within {@code limit}.
   */
  static int skip(byte[] a, int pos, int limit, int tag) {
    return skip(a, pos, limit, tag, 0);
  }

  private static int skip(byte[] a, int pos, int limit, int tag, int depth) {
    switch (WireTags.wireType(tag)) {
      case WireTags.VARINT:
        for (int i = 0; i < 10 && pos < limit; i++) {
          if (a[pos++] >= 0) {
            return pos;
          }
        }
        return -1;
      case WireTags.FIXED64:
        return pos + 8 <= limit ? pos + 8 : -1;
      case WireTags.FIXED32:
        return pos + 4 <= limit ? pos + 4 : -1;
      case WireTags.LENGTH_DELIMITED:
        long n = body(a, pos, limit);
        return n < 0 ? -1 : next(n) + value(n);
      case 3: // start group: fields up to the matching end group
        if (depth == MAX_GROUP_DEPTH) {
          return -1;
        }
        while (pos < limit) {
          long t = varint(a, pos, limit);
          if (t < 0) {
            return -1;
          }
          pos = next(t);
          if (value(t) == ((tag & ~7) | 4)) {
            return pos;
          }
          pos = skip(a, pos, limit, value(t), depth + 1);
          if (pos < 0) {
            return -1;
          }
        }
        return -1;
      default:
        return -1;
    }
  }
}
