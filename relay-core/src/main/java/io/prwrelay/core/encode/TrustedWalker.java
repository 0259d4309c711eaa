package io.prwrelay.core.encode;

import io.prwrelay.core.wire.WireTags;

/**
 * Cursor over protobuf bytes that {@link io.prwrelay.core.remotewrite.V2RequestReader} has already
 * validated: tags, varints and field bounds are read without checks, because the reader proved
 * every one of them lies inside its enclosing message. Never use it on unvalidated bytes.
 */
final class TrustedWalker {
  private static final int START_GROUP = 3;
  private static final int END_GROUP = 4;

  byte[] a;

  /** The read position, an index into {@link #a}. */
  int pos;

  /** After {@link #skip} of a length-delimited field: index of its first content byte. */
  int body;

  TrustedWalker at(byte[] array, int position) {
    this.a = array;
    this.pos = position;
    return this;
  }

  int tag() {
    int b = a[pos];
    if (b >= 0) {
      pos++;
      return b;
    }
    return (int) varint();
  }

  long varint() {
    byte[] a = this.a;
    int p = pos;
    int b = a[p++];
    if (b >= 0) {
      pos = p;
      return b;
    }
    long result = b & 0x7F;
    int shift = 7;
    do {
      b = a[p++];
      result |= (long) (b & 0x7F) << shift;
      shift += 7;
    } while (b < 0);
    pos = p;
    return result;
  }

  /** Skips the field whose {@code tag} was just read; sets {@link #body} for length-delimited. */
  void skip(int tag) {
    switch (WireTags.wireType(tag)) {
      case WireTags.VARINT:
        varint();
        return;
      case WireTags.FIXED64:
        pos += 8;
        return;
      case WireTags.LENGTH_DELIMITED:
        {
          int length = (int) varint();
          body = pos;
          pos += length;
          return;
        }
      case WireTags.FIXED32:
        pos += 4;
        return;
      case START_GROUP:
        {
          int depth = 1;
          while (depth > 0) {
            int t = tag();
            int type = WireTags.wireType(t);
            if (type == START_GROUP) {
              depth++;
            } else if (type == END_GROUP) {
              depth--;
            } else {
              skip(t);
            }
          }
          return;
        }
      default:
        throw new IllegalStateException("unvalidated bytes: end-group tag at " + pos);
    }
  }

  /**
   * Copies the fields from the position up to {@code to}, byte for byte, into {@code d} at {@code
   * o}, leaving out those with tag {@code except1} or {@code except2}; the position ends at {@code
   * to}.
   *
   * @return the index in {@code d} after the last byte written
   */
  int copyFieldsExcept(int to, int except1, int except2, byte[] d, int o) {
    while (pos < to) {
      int fieldStart = pos;
      int t = tag();
      skip(t);
      if (t != except1 && t != except2) {
        int length = pos - fieldStart;
        System.arraycopy(a, fieldStart, d, o, length);
        o += length;
      }
    }
    return o;
  }
}
