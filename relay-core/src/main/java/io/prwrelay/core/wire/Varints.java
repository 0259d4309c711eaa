package io.prwrelay.core.wire;

/**
 * Varint sizes and array writes for encoders that build a message in a {@code byte[]} before
 * handing it to a buffer: a store per byte into an array costs a fraction of a {@code writeByte} on
 * a pooled direct buffer, which matters when every label ref of every series is re-encoded.
 */
public final class Varints {
  private Varints() {}

  /** Bytes {@code value} takes as an unsigned 32-bit varint. */
  public static int size32(int value) {
    return WireTags.varint32Size(value);
  }

  /** Bytes {@code value} takes as a 64-bit varint (10 for a negative value). */
  public static int size64(long value) {
    int n = 1;
    while ((value & ~0x7FL) != 0) {
      value >>>= 7;
      n++;
    }
    return n;
  }

  /** Writes {@code value} as an unsigned varint at {@code at}; returns the index after it. */
  public static int put32(byte[] dst, int at, int value) {
    if ((value & ~0x7F) == 0) {
      dst[at] = (byte) value;
      return at + 1;
    }
    while ((value & ~0x7F) != 0) {
      dst[at++] = (byte) ((value & 0x7F) | 0x80);
      value >>>= 7;
    }
    dst[at++] = (byte) value;
    return at;
  }

  /** Writes {@code value} as a 64-bit varint at {@code at}; returns the index after it. */
  public static int put64(byte[] dst, int at, long value) {
    while ((value & ~0x7FL) != 0) {
      dst[at++] = (byte) ((value & 0x7F) | 0x80);
      value >>>= 7;
    }
    dst[at++] = (byte) value;
    return at;
  }
}
