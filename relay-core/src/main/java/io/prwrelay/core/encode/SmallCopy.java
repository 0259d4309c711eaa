package io.prwrelay.core.encode;

/**
 * Copies between byte arrays, by a plain loop for the short runs encoders copy most (label names
 * and values, samples): below {@value #LOOP_BELOW} bytes the loop is faster than the call into
 * {@link System#arraycopy}, measured on the real payload's labels.
 */
final class SmallCopy {
  static final int LOOP_BELOW = 24;

  private SmallCopy() {}

  /**
   * Copies {@code src[from, from + length)} to {@code dst} at {@code to}; returns {@code to +
   * length}.
   */
  static int copy(byte[] src, int from, byte[] dst, int to, int length) {
    if (length < LOOP_BELOW) {
      for (int i = 0; i < length; i++) {
        dst[to + i] = src[from + i];
      }
    } else {
      System.arraycopy(src, from, dst, to, length);
    }
    return to + length;
  }
}
