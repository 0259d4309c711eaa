package io.prwrelay.core.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.github.luben.zstd.Zstd;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.testing.FuzzInputs;
import org.junit.jupiter.api.AfterAll;

/**
 * Fuzzed bytes as a compressed body, through {@link SnappyCodec} and {@link ZstdCodec} with a small
 * decompressed-size cap: the result is at most the cap, or a {@link CodecException}; nothing else
 * is thrown and nothing leaks. The same bytes as an uncompressed body survive a round trip through
 * each codec unchanged.
 */
class CodecFuzzTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  /** Small, so that fuzzed length preambles and frame headers meet the cap often. */
  private static final int CAP = 64 * 1024;

  private static final ZstdCodec ZSTD = new ZstdCodec();

  @AfterAll
  static void closeZstd() {
    ZSTD.close();
  }

  @FuzzTest(maxDuration = "4m")
  void snappyDecodesWithinTheCapOrAnswersCodecException(byte[] data) {
    decodesWithinTheCap(data, SnappyCodec::decode, true);
    roundTrip(data, true);
  }

  @FuzzTest(maxDuration = "4m")
  void zstdDecodesWithinTheCapOrAnswersCodecException(byte[] data) {
    decodesWithinTheCap(data, ZSTD::decode, false);
    roundTrip(data, false);
  }

  /** One codec's decode: {@code in} borrowed, the result owned by the caller. */
  private interface Decoder {
    ByteBuf decode(ByteBuf in, ByteBufAllocator alloc, int cap) throws CodecException;
  }

  /**
   * {@code data} as a compressed body: decoded to at most {@link #CAP} bytes (with the input left
   * unread when {@code inputKept}), or refused with a {@link CodecException} that has a message.
   */
  private static void decodesWithinTheCap(byte[] data, Decoder decoder, boolean inputKept) {
    ByteBuf in = FuzzInputs.wrap(data, ALLOC);
    try {
      ByteBuf out = decoder.decode(in, ALLOC, CAP);
      try {
        assertTrue(out.readableBytes() <= CAP, "within the cap");
        if (inputKept) {
          assertEquals(data.length, in.readableBytes(), "input left unchanged");
        }
      } finally {
        out.release();
      }
    } catch (CodecException e) {
      assertTrue(e.getMessage() != null && !e.getMessage().isEmpty());
    } finally {
      in.release();
    }
  }

  /** {@code data} compressed and decoded again must come back unchanged. */
  private static void roundTrip(byte[] data, boolean snappy) {
    if (data.length > CAP) {
      return;
    }
    ByteBuf plain = FuzzInputs.wrap(data, ALLOC);
    ByteBuf compressed =
        snappy ? SnappyCodec.encode(plain, ALLOC) : Unpooled.wrappedBuffer(Zstd.compress(data));
    plain.release();
    try {
      ByteBuf back =
          snappy ? SnappyCodec.decode(compressed, ALLOC, CAP) : ZSTD.decode(compressed, ALLOC, CAP);
      try {
        assertArrayEquals(data, ByteBufUtil.getBytes(back));
      } finally {
        back.release();
      }
    } catch (CodecException e) {
      throw new AssertionError("the codec's own output was refused: " + e.getMessage(), e);
    } finally {
      compressed.release();
    }
  }
}
