package io.prwrelay.testing;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** Builds protobuf bytes by hand, for inputs the generated classes would never produce. */
public final class RawProto {
  private RawProto() {}

  public static byte[] cat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  public static byte[] varint(long v) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
    return out.toByteArray();
  }

  public static byte[] tag(int field, int wireType) {
    return varint(((long) field << 3) | wireType);
  }

  /** A length-delimited field holding the concatenation of {@code parts}. */
  public static byte[] len(int field, byte[]... parts) {
    byte[] body = cat(parts);
    return cat(tag(field, 2), varint(body.length), body);
  }

  public static byte[] str(int field, String s) {
    return len(field, s.getBytes(StandardCharsets.UTF_8));
  }

  public static byte[] varintField(int field, long v) {
    return cat(tag(field, 0), varint(v));
  }

  public static byte[] bytes(int... values) {
    byte[] b = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      b[i] = (byte) values[i];
    }
    return b;
  }

  /** A PRW 1.0 label field. */
  public static byte[] label(String name, String value) {
    return len(1, str(1, name), str(2, value));
  }

  /** A PRW 1.0 sample field. */
  public static byte[] sample(double value, long timestamp) {
    return len(
        2, cat(tag(1, 1), le64(Double.doubleToRawLongBits(value))), varintField(2, timestamp));
  }

  /** A PRW 1.0 timeseries field holding {@code parts}. */
  public static byte[] series(byte[]... parts) {
    return len(1, parts);
  }

  private static byte[] le64(long v) {
    byte[] b = new byte[8];
    for (int i = 0; i < 8; i++) {
      b[i] = (byte) (v >>> (8 * i));
    }
    return b;
  }
}
