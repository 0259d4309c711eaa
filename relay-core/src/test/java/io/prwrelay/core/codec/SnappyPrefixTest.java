package io.prwrelay.core.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

/** The start of a snappy block, against snappy-java's decompression of the whole block. */
class SnappyPrefixTest {
  private static final PooledByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  private static byte[] prefix(byte[] block, int n) throws CodecException {
    ByteBuf out = SnappyPrefix.decode(Unpooled.wrappedBuffer(block), n, ALLOC);
    try {
      return ByteBufUtil.getBytes(out);
    } finally {
      out.release();
    }
  }

  @Test
  void everyPrefixEqualsTheStartOfTheWholeBlock() throws Exception {
    Random r = new Random(11);
    for (int round = 0; round < 200; round++) {
      byte[] plain = new byte[r.nextInt(70_000)];
      // Runs of repeated and random bytes: literals of every length class and all copy kinds.
      for (int i = 0; i < plain.length; ) {
        int run = 1 + r.nextInt(r.nextBoolean() ? 8 : 300);
        byte v = (byte) r.nextInt(r.nextBoolean() ? 4 : 256);
        for (int k = 0; k < run && i < plain.length; k++, i++) {
          plain[i] = r.nextInt(5) == 0 ? (byte) r.nextInt(256) : v;
        }
      }
      byte[] block = Snappy.compress(plain);
      for (int n : new int[] {0, 1, 7, 64, 4096, r.nextInt(plain.length + 1), plain.length + 5}) {
        int want = Math.min(n, plain.length);
        assertArrayEquals(Arrays.copyOf(plain, want), prefix(block, n), "prefix " + n);
      }
    }
  }

  @Test
  void aDamagedBlockIsCorruptNeverAnOutOfBoundsRead() throws Exception {
    Random r = new Random(3);
    byte[] plain = new byte[5000];
    for (int i = 0; i < plain.length; i++) {
      plain[i] = (byte) (i % 97 < 50 ? i % 7 : r.nextInt(256));
    }
    byte[] good = Snappy.compress(plain);
    int corrupt = 0;
    for (int i = 0; i < 5000; i++) {
      byte[] b = good.clone();
      b[1 + r.nextInt(b.length - 1)] = (byte) r.nextInt(256);
      try {
        assertEquals(Math.min(4096, plain.length), prefix(b, 4096).length);
      } catch (CodecException e) {
        corrupt++;
      }
    }
    byte[] cut = Arrays.copyOf(good, good.length / 2);
    assertThrows(CodecException.class, () -> prefix(cut, plain.length));
    assertEquals(true, corrupt > 0);
  }
}
