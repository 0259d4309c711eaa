package io.prwrelay.core.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.testing.NoAllocationAllocator;
import io.prwrelay.testing.RawProto;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.xerial.snappy.Snappy;

class SnappyCodecTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  private static byte[] data(int n, long seed) {
    Random r = new Random(seed);
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (r.nextInt(4) == 0 ? r.nextInt() : 'a' + (i % 7));
    }
    return b;
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 100, 65_536, 1_000_000})
  void decodesWhatSnappyJavaEncodesFromHeapAndDirectBuffers(int size) throws Exception {
    byte[] plain = data(size, size);
    byte[] block = Snappy.compress(plain);
    for (boolean direct : new boolean[] {false, true}) {
      ByteBuf in = direct ? ALLOC.directBuffer().writeBytes(block) : Unpooled.wrappedBuffer(block);
      ByteBuf out = SnappyCodec.decode(in, ALLOC, size);
      try {
        assertTrue(out.hasArray(), "decoded into a heap buffer");
        assertArrayEquals(plain, ByteBufUtil.getBytes(out));
        assertEquals(0, in.readerIndex(), "input indexes unchanged");
      } finally {
        out.release();
        in.release();
      }
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 7, 300_000})
  void encodesIntoTheInputsKindOfMemory(int size) throws Exception {
    byte[] plain = data(size, 3);
    for (boolean direct : new boolean[] {false, true}) {
      ByteBuf in =
          direct ? ALLOC.directBuffer().writeBytes(plain) : ALLOC.heapBuffer().writeBytes(plain);
      ByteBuf block = SnappyCodec.encode(in, ALLOC);
      try {
        assertEquals(direct, block.isDirect());
        assertArrayEquals(plain, Snappy.uncompress(ByteBufUtil.getBytes(block)));
      } finally {
        block.release();
        in.release();
      }
    }
  }

  @Test
  void declaredLengthOverTheCapIsRejectedBeforeAllocating() {
    byte[] block = RawProto.cat(RawProto.varint(0xFFFF_FFFFL), new byte[] {0, 1, 2});
    CodecException e =
        assertThrows(
            CodecException.class,
            () ->
                SnappyCodec.decode(
                    Unpooled.wrappedBuffer(block), new NoAllocationAllocator(), 1 << 20));
    assertEquals(CodecException.Problem.TOO_LARGE, e.problem());
    assertTrue(e.getMessage().contains("4294967295"), e.getMessage());
  }

  @Test
  void declaredLengthEqualToTheCapIsAccepted() throws Exception {
    byte[] plain = data(1000, 1);
    ByteBuf out = SnappyCodec.decode(Unpooled.wrappedBuffer(Snappy.compress(plain)), ALLOC, 1000);
    assertEquals(1000, out.readableBytes());
    out.release();
    assertThrows(
        CodecException.class,
        () -> SnappyCodec.decode(Unpooled.wrappedBuffer(Snappy.compress(plain)), ALLOC, 999));
  }

  @Test
  void corruptBlocksAreTypedErrors() throws Exception {
    byte[] good = Snappy.compress(data(5000, 9));
    byte[][] bad = {
      new byte[0],
      {(byte) 0x80},
      {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x01},
      Arrays.copyOf(good, good.length / 2),
      RawProto.cat(RawProto.varint(100), new byte[] {(byte) 0xFF, 0x13, 0x77}),
      RawProto.cat(RawProto.varint(10_000), Arrays.copyOfRange(good, 2, good.length)),
    };
    for (byte[] b : bad) {
      ByteBuf in = Unpooled.wrappedBuffer(b);
      CodecException e =
          assertThrows(CodecException.class, () -> SnappyCodec.decode(in, ALLOC, 1 << 20));
      assertEquals(CodecException.Problem.CORRUPT, e.problem(), e.getMessage());
      assertFalse(e.getMessage().isEmpty());
    }
  }

  @Test
  void joinedBlocksDecompressToTheConcatenationOfTheirContents() throws Exception {
    // Sizes around the 64 KiB fragments snappy compresses in, and an empty block; the repeated
    // pieces make copies whose offsets reach far back inside their own block.
    int[] sizes = {0, 1, 100, 65_535, 65_536, 70_000, 300_000};
    java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
    java.util.List<ByteBuf> blocks = new java.util.ArrayList<>();
    for (int i = 0; i < sizes.length; i++) {
      byte[] plain = data(sizes[i], i);
      expected.write(plain);
      blocks.add(Unpooled.wrappedBuffer(Snappy.compress(plain)));
    }
    ByteBuf joined = SnappyCodec.concat(blocks, ALLOC);
    try {
      byte[] block = ByteBufUtil.getBytes(joined);
      assertTrue(Snappy.isValidCompressedBuffer(block));
      assertArrayEquals(expected.toByteArray(), Snappy.uncompress(block));
      for (ByteBuf b : blocks) {
        assertEquals(0, b.readerIndex(), "input indexes unchanged");
      }
    } finally {
      joined.release();
    }
  }

  @Test
  void joiningABlockWithAMalformedPreambleIsATypedError() throws Exception {
    ByteBuf good = Unpooled.wrappedBuffer(Snappy.compress(data(100, 1)));
    ByteBuf bad = Unpooled.wrappedBuffer(new byte[] {(byte) 0x80});
    CodecException e =
        assertThrows(
            CodecException.class, () -> SnappyCodec.concat(java.util.List.of(good, bad), ALLOC));
    assertEquals(CodecException.Problem.CORRUPT, e.problem());
  }
}
