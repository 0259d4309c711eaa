package io.prwrelay.core.wire;

/**
 * Protobuf tag arithmetic and varint sizes, shared by every message descriptor.
 *
 * <p>A tag is {@code (fieldNumber << 3) | wireType}. Only the wire types prw-relay needs to name
 * are defined here; every other type is skipped by {@link com.google.protobuf.CodedInputStream}.
 */
public final class WireTags {
  /** Wire type of varint-encoded scalars. */
  public static final int VARINT = 0;

  /** Wire type of little-endian 64-bit scalars. */
  public static final int FIXED64 = 1;

  /** Wire type of length-delimited fields: strings, bytes, embedded messages, packed repeated. */
  public static final int LENGTH_DELIMITED = 2;

  /** Wire type of little-endian 32-bit scalars. */
  public static final int FIXED32 = 5;

  private WireTags() {}

  /** Returns the field number of {@code tag}. */
  public static int fieldNumber(int tag) {
    return tag >>> 3;
  }

  /** Returns the wire type of {@code tag}. */
  public static int wireType(int tag) {
    return tag & 7;
  }

  /** Returns the number of bytes {@code value} takes as an unsigned varint. */
  public static int varint32Size(int value) {
    if ((value & (~0 << 7)) == 0) {
      return 1;
    }
    if ((value & (~0 << 14)) == 0) {
      return 2;
    }
    if ((value & (~0 << 21)) == 0) {
      return 3;
    }
    if ((value & (~0 << 28)) == 0) {
      return 4;
    }
    return 5;
  }

  /** Returns the name of a wire type for error messages. */
  public static String wireTypeName(int wireType) {
    switch (wireType) {
      case VARINT:
        return "varint";
      case FIXED64:
        return "fixed64";
      case LENGTH_DELIMITED:
        return "length-delimited";
      case 3:
        return "start-group";
      case 4:
        return "end-group";
      case FIXED32:
        return "fixed32";
      default:
        return "invalid(" + wireType + ")";
    }
  }
}
