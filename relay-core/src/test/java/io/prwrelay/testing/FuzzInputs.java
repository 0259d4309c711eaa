package io.prwrelay.testing;

import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;

/**
 * What the fuzz tests share: fuzzed bytes as the buffers the relay meets, and the oracle's reading
 * of bytes the relay accepted.
 */
public final class FuzzInputs {
  private FuzzInputs() {}

  /**
   * {@code data} as a buffer the caller owns: a heap buffer over the array for inputs of even
   * length, a pooled direct copy for odd lengths, so both of the relay's read paths are fuzzed.
   */
  public static ByteBuf wrap(byte[] data, ByteBufAllocator alloc) {
    if ((data.length & 1) == 0) {
      return Unpooled.wrappedBuffer(data);
    }
    ByteBuf direct = alloc.directBuffer(data.length, data.length);
    return direct.writeBytes(data);
  }

  /**
   * The PRW 1.0 request the oracle reads from bytes the relay accepted, or {@code null} when the
   * only objection is a string that is not UTF-8 (proto3 strings must be; the relay passes label
   * bytes through without looking, like the Go receivers do).
   *
   * @throws AssertionError when the oracle rejects the bytes for any other reason
   */
  public static WriteRequest parseV1(byte[] data) {
    try {
      return WriteRequest.parseFrom(data);
    } catch (InvalidProtocolBufferException e) {
      return onlyUtf8(e);
    }
  }

  /** {@link #parseV1} for a PRW 2.0 request. */
  public static Request parseV2(byte[] data) {
    try {
      return Request.parseFrom(data);
    } catch (InvalidProtocolBufferException e) {
      return onlyUtf8(e);
    }
  }

  private static <T> T onlyUtf8(InvalidProtocolBufferException e) {
    if (String.valueOf(e.getMessage()).contains("UTF-8")) {
      return null;
    }
    throw new AssertionError("the relay accepted bytes the oracle rejects: " + e.getMessage(), e);
  }
}
