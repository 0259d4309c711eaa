package io.prwrelay.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.LongStream;
import java.util.stream.Stream;

/**
 * What the property tests of the routers and the converter share: the seeds they run, the allocator
 * the relay writes its output with, and a generated request handed to the relay in the kinds of
 * buffer it meets, released once the relay has read it.
 */
public final class RequestBuffers {
  /** The allocator the relay under test writes its output with. */
  public static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  /**
   * The largest output bound the relay accepts (the largest buffer): for tests that are not about
   * the bound.
   */
  public static final int MAX_OUTPUT = Integer.MAX_VALUE - 8;

  private RequestBuffers() {}

  /** Seeds 1 to {@code count}: the arguments of a {@link ForEachSeed} method. */
  public static Stream<Long> seeds(int count) {
    return LongStream.rangeClosed(1, count).boxed();
  }

  /**
   * Hands {@code request} to {@code read} in a heap buffer over the array and releases the buffer
   * once {@code read} returns; what {@code read} returns must not hold on to the buffer.
   */
  public static <T> T readHeap(byte[] request, Function<ByteBuf, T> read) {
    return readAndRelease(Unpooled.wrappedBuffer(request), read);
  }

  /**
   * Hands {@code request} to {@code read} in a heap buffer at a random offset, a heap buffer over
   * the array, or a pooled direct buffer (which the relay must copy), drawn from {@code r}, and
   * releases the buffer once {@code read} returns.
   */
  public static <T> T readAnyKind(byte[] request, Random r, Function<ByteBuf, T> read) {
    return readAndRelease(anyKind(request, r), read);
  }

  /**
   * Applies {@code read} to {@code in} and releases it.
   *
   * @param in takes ownership
   */
  private static <T> T readAndRelease(ByteBuf in, Function<ByteBuf, T> read) {
    try {
      return read.apply(in);
    } finally {
      in.release();
    }
  }

  private static ByteBuf anyKind(byte[] bytes, Random r) {
    switch (r.nextInt(3)) {
      case 0:
        return Unpooled.wrappedBuffer(bytes);
      case 1:
        {
          ByteBuf b = ALLOC.directBuffer(bytes.length);
          return b.writeBytes(bytes);
        }
      default:
        {
          int pad = 1 + r.nextInt(7);
          ByteBuf b = Unpooled.buffer(bytes.length + 2 * pad);
          b.writeZero(pad).writeBytes(bytes).writeZero(pad);
          b.readerIndex(pad);
          b.writerIndex(pad + bytes.length);
          return b;
        }
    }
  }
}
