package io.prwrelay.server.lane;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** XXH64 against the reference implementation's published values. */
class BodyHashTest {
  private static long hash(byte[] bytes) {
    return BodyHash.xxh64(Unpooled.wrappedBuffer(bytes));
  }

  @Test
  void matchesTheReferenceXxh64ForEveryTailLength() {
    assertEquals(0xEF46DB3751D8E999L, hash(new byte[0]));
    assertEquals(0xD24EC4F1A98C6E5BL, hash("a".getBytes(StandardCharsets.US_ASCII)));
    assertEquals(0x44BC2CF5AD770999L, hash("abc".getBytes(StandardCharsets.US_ASCII)));
    assertEquals(
        0xFBCEA83C8A378BF1L,
        hash("Nobody inspects the spammish repetition".getBytes(StandardCharsets.US_ASCII)));
    byte[] long771 = new byte[771];
    for (int i = 0; i < 768; i++) {
      long771[i] = (byte) i;
    }
    long771[768] = 'x';
    long771[769] = 'y';
    long771[770] = 'z';
    assertEquals(0xE921A1B45BD779F8L, hash(long771));
  }

  @Test
  void hashesOnlyTheReadableBytesOfADirectBufferAndLeavesItsIndexes() {
    ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64);
    try {
      b.writeBytes("--abc".getBytes(StandardCharsets.US_ASCII)).readerIndex(2);
      assertEquals(0x44BC2CF5AD770999L, BodyHash.xxh64(b));
      assertEquals(2, b.readerIndex());
      assertEquals(5, b.writerIndex());
    } finally {
      b.release();
    }
  }
}
