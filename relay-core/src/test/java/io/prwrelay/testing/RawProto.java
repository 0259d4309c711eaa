package io.prwrelay.testing;

import io.prwrelay.testkit.WriteRequestEncoder;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Builds protobuf bytes by hand, for inputs the generated classes would never produce: malformed
 * framing, explicitly empty fields, unknown fields. The PRW fields ({@link #label}, {@link
 * #sample}, {@link #series}) come from the one request encoder, {@link WriteRequestEncoder}, and
 * are canonical, as protobuf-java writes them (an empty string or a zero value is left out); write
 * an explicitly empty field with {@link #len} and {@link #str}.
 */
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

  /** {@code depth} start-group tags of {@code field}, never closed: for the nesting limit. */
  public static byte[] groupStarts(int field, int depth) {
    byte[] open = tag(field, 3);
    byte[] out = new byte[open.length * depth];
    for (int i = 0; i < depth; i++) {
      System.arraycopy(open, 0, out, i * open.length, open.length);
    }
    return out;
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
    return WriteRequestEncoder.labelField(name, value);
  }

  /** A PRW 1.0 sample field. */
  public static byte[] sample(double value, long timestamp) {
    return WriteRequestEncoder.sampleField(value, timestamp);
  }

  /** A PRW 1.0 timeseries field holding {@code parts}. */
  public static byte[] series(byte[]... parts) {
    return WriteRequestEncoder.seriesField(parts);
  }
}
