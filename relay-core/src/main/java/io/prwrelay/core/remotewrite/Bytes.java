package io.prwrelay.core.remotewrite;

/**
 * In-place byte comparisons for the hot path. Label names and tenant values are short and most
 * comparisons fail on the first byte, so the length and first byte are checked before any loop:
 * measured on the real node_exporter payload, that halved the cost of matching label names (a
 * loop's setup costs more than the few bytes it compares).
 */
public final class Bytes {
  private Bytes() {}

  /** Whether {@code array[at, at + length)} equals {@code expected}. */
  public static boolean equalsAt(byte[] array, int at, int length, byte[] expected) {
    return equalsAt(array, at, length, expected, 0, expected.length);
  }

  /** Whether {@code a[at, at + length)} equals {@code b[bAt, bAt + bLength)}. */
  public static boolean equalsAt(byte[] a, int at, int length, byte[] b, int bAt, int bLength) {
    if (bLength != length) {
      return false;
    }
    if (length == 0) {
      return true;
    }
    if (a[at] != b[bAt] || a[at + length - 1] != b[bAt + length - 1]) {
      return false;
    }
    for (int i = 1; i < length - 1; i++) {
      if (a[at + i] != b[bAt + i]) {
        return false;
      }
    }
    return true;
  }
}
