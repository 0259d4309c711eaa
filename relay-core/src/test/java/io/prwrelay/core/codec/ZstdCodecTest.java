package io.prwrelay.core.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdOutputStream;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.testing.NoAllocationAllocator;
import io.prwrelay.testing.RawProto;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ZstdCodecTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private final ZstdCodec codec = new ZstdCodec();

  @AfterEach
  void close() {
    codec.close();
  }

  private static byte[] data(int n) {
    Random r = new Random(n);
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (r.nextInt(3) == 0 ? r.nextInt() : 'k');
    }
    return b;
  }

  /** A frame without a declared content size, as streaming compressors write. */
  private static byte[] streamed(byte[] plain) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ZstdOutputStream out = new ZstdOutputStream(bytes)) {
      out.write(plain);
    }
    byte[] frame = bytes.toByteArray();
    assertEquals(-1, Zstd.getFrameContentSize(frame), "frame must not declare its size");
    return frame;
  }

  private byte[] decode(byte[] body, int max, boolean direct) throws Exception {
    ByteBuf in = direct ? ALLOC.directBuffer().writeBytes(body) : Unpooled.wrappedBuffer(body);
    try {
      ByteBuf out = codec.decode(in, ALLOC, max);
      try {
        assertTrue(out.hasArray());
        return ByteBufUtil.getBytes(out);
      } finally {
        out.release();
      }
    } finally {
      in.release();
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 1000, 2_000_000})
  void decodesFramesWithAndWithoutContentSize(int size) throws Exception {
    byte[] plain = data(size);
    for (boolean direct : new boolean[] {false, true}) {
      assertArrayEquals(plain, decode(Zstd.compress(plain), size, direct));
      assertArrayEquals(plain, decode(streamed(plain), size, direct));
    }
  }

  @Test
  void decodesConcatenatedFrames() throws Exception {
    byte[] a = data(3000);
    byte[] b = data(70_000);
    byte[] body = RawProto.cat(Zstd.compress(a), streamed(b), Zstd.compress(a));
    assertArrayEquals(RawProto.cat(a, b, a), decode(body, 1 << 20, false));
  }

  @Test
  void declaredContentSizeOverTheCapIsRejectedBeforeAllocating() {
    byte[] frame = Zstd.compress(new byte[100_000]);
    CodecException e =
        assertThrows(
            CodecException.class,
            () -> codec.decode(Unpooled.wrappedBuffer(frame), new NoAllocationAllocator(), 99_999));
    assertEquals(CodecException.Problem.TOO_LARGE, e.problem());
  }

  @Test
  void undeclaredContentOverTheCapIsRejected() throws Exception {
    byte[] frame = streamed(new byte[5_000_000]);
    CodecException e =
        assertThrows(
            CodecException.class,
            () -> codec.decode(Unpooled.wrappedBuffer(frame), ALLOC, 4_999_999));
    assertEquals(CodecException.Problem.TOO_LARGE, e.problem());
    assertArrayEquals(new byte[5_000_000], decode(frame, 5_000_000, false));
  }

  @Test
  void corruptFramesAreTypedErrors() throws Exception {
    byte[] good = Zstd.compress(data(50_000));
    byte[] goodStreamed = streamed(data(50_000));
    byte[][] bad = {
      new byte[0],
      {1, 2, 3, 4, 5, 6, 7, 8},
      Arrays.copyOf(good, good.length - 3),
      Arrays.copyOf(goodStreamed, goodStreamed.length / 2),
      RawProto.cat(good, new byte[] {9, 9, 9}),
    };
    for (byte[] b : bad) {
      CodecException e =
          assertThrows(
              CodecException.class, () -> codec.decode(Unpooled.wrappedBuffer(b), ALLOC, 1 << 20));
      assertEquals(CodecException.Problem.CORRUPT, e.problem(), e.getMessage());
    }
    assertArrayEquals(data(50_000), decode(good, 1 << 20, false), "usable after errors");
  }
}
