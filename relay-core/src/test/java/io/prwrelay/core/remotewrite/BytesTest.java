package io.prwrelay.core.remotewrite;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BytesTest {
  @Test
  void agreesWithArraysEqualsForEveryLengthAndEveryDifferingPosition() {
    Random r = new Random(1);
    for (int length = 0; length <= 40; length++) {
      byte[] a = new byte[length + 7];
      r.nextBytes(a);
      int at = r.nextInt(8);
      byte[] b = Arrays.copyOfRange(a, at, at + length);
      byte[] padded = new byte[length + 3];
      System.arraycopy(b, 0, padded, 2, length);
      assertEquals(true, Bytes.equalsAt(a, at, length, b));
      assertEquals(true, Bytes.equalsAt(a, at, length, padded, 2, length));
      for (int i = 0; i < length; i++) {
        byte[] c = b.clone();
        c[i] ^= 1;
        assertEquals(
            false, Bytes.equalsAt(a, at, length, c), "length " + length + " differing at " + i);
      }
      if (length > 0) {
        assertEquals(false, Bytes.equalsAt(a, at, length - 1, b));
      }
    }
  }
}
