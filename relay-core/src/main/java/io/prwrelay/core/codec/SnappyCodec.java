package io.prwrelay.core.codec;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.wire.HeapBuffers;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import org.xerial.snappy.Snappy;

/**
 * Snappy block format (never the framed format), as Prometheus Remote Write requires, via
 * snappy-java.
 *
 * <p>A block starts with its uncompressed length as a varint; {@link #decode} checks that declared
 * length against the cap before allocating anything, then decompresses into one pooled heap buffer
 * of exactly that size (the reader scans heap arrays fastest). Stateless and thread-safe.
 *
 * <pre>
 * | varint uncompressed length (1-5 bytes) | literal/copy elements ... |
 * </pre>
 */
public final class SnappyCodec {
  private SnappyCodec() {}

  /**
   * Decompresses a snappy block.
   *
   * @param in borrowed; the block between reader and writer index (left unchanged)
   * @param alloc source of the output buffer and of a heap copy of {@code in} when it is not
   *     array-backed
   * @param maxDecompressed cap on the declared uncompressed length, checked before allocation
   * @return a heap buffer the caller owns and must release
   * @throws CodecException {@code TOO_LARGE} above the cap, {@code CORRUPT} when the block is
   *     invalid
   */
  public static ByteBuf decode(ByteBuf in, ByteBufAllocator alloc, int maxDecompressed)
      throws CodecException {
    return decode(in, alloc, maxDecompressed, MemoryGrant.UNLIMITED);
  }

  /**
   * Decompresses a snappy block, once {@code grant} allowed its declared length.
   *
   * @param in borrowed; the block between reader and writer index (left unchanged)
   * @param alloc source of the output buffer and of a heap copy of {@code in} when it is not
   *     array-backed
   * @param maxDecompressed cap on the declared uncompressed length, checked before allocation
   * @param grant asked for the declared length after the cap and before allocating it
   * @return a heap buffer the caller owns and must release
   * @throws CodecException {@code TOO_LARGE} above the cap, {@code OVER_BUDGET} when the grant
   *     refused, {@code CORRUPT} when the block is invalid
   */
  public static ByteBuf decode(
      ByteBuf in, ByteBufAllocator alloc, int maxDecompressed, MemoryGrant grant)
      throws CodecException {
    long declared = declaredLength(in);
    if (declared > maxDecompressed) {
      throw new CodecException(
          CodecException.Problem.TOO_LARGE,
          "snappy block declares "
              + declared
              + " decompressed bytes, more than the limit of "
              + maxDecompressed);
    }
    if (!grant.reserve(declared)) {
      throw overBudget(declared);
    }
    int length = (int) declared;
    ByteBuf src = HeapBuffers.heap(in, alloc);
    ByteBuf out = null;
    boolean ok = false;
    try {
      out = alloc.heapBuffer(length, length);
      int n =
          Snappy.uncompress(
              src.array(),
              src.arrayOffset() + src.readerIndex(),
              src.readableBytes(),
              out.array(),
              out.arrayOffset());
      if (n != length) {
        throw corrupt("decompressed " + n + " bytes, block declared " + length);
      }
      out.writerIndex(length);
      ok = true;
      return out;
    } catch (IOException e) {
      throw corrupt("invalid snappy block (" + e.getMessage() + ")");
    } finally {
      if (!ok && out != null) {
        out.release();
      }
      if (src != in) {
        src.release();
      }
    }
  }

  /**
   * Compresses {@code in} into one snappy block.
   *
   * @param in borrowed; its readable bytes are compressed (indexes unchanged)
   * @return a buffer the caller owns: direct when {@code in} is a single direct region, heap
   *     otherwise
   */
  public static ByteBuf encode(ByteBuf in, ByteBufAllocator alloc) {
    int length = in.readableBytes();
    int max = Snappy.maxCompressedLength(length);
    try {
      if (Buffers.isSingleDirect(in)) {
        ByteBuf out = alloc.directBuffer(max, max);
        try {
          // The buffers' own NIO views, not new ones (nioBuffer() makes a ByteBuffer per call): the
          // two are of different buffers and live only for this call.
          ByteBuffer dst = out.internalNioBuffer(0, max);
          int n = Snappy.compress(in.internalNioBuffer(in.readerIndex(), length), dst);
          out.writerIndex(n);
          return out;
        } catch (IOException | RuntimeException e) {
          out.release();
          throw e;
        }
      }
      ByteBuf src = HeapBuffers.heap(in, alloc);
      ByteBuf out = null;
      try {
        out = alloc.heapBuffer(max, max);
        int n =
            Snappy.compress(
                src.array(),
                src.arrayOffset() + src.readerIndex(),
                length,
                out.array(),
                out.arrayOffset());
        out.writerIndex(n);
        return out;
      } catch (IOException | RuntimeException | Error e) {
        if (out != null) {
          out.release();
        }
        throw e;
      } finally {
        if (src != in) {
          src.release();
        }
      }
    } catch (IOException e) {
      // snappy-java reports only native failures here, which compression of valid memory cannot
      // cause.
      throw new IllegalStateException("snappy compression failed", e);
    }
  }

  /**
   * Joins snappy blocks into one block that decompresses to the concatenation of theirs, without
   * decompressing or compressing anything: a copy element's offset counts back from the position it
   * writes at and never reaches before its own block's start, so each block's elements mean the
   * same after the blocks before it. Only the length preamble is written anew.
   *
   * <pre>
   * | len A | elements A |  +  | len B | elements B |  =  | len A + B | elements A | elements B |
   * </pre>
   *
   * @param blocks borrowed; each one's readable bytes are one block (indexes unchanged)
   * @return a heap buffer the caller owns
   * @throws CodecException {@code CORRUPT} when a preamble is malformed, {@code TOO_LARGE} when the
   *     joined block would declare more than 2^32 - 1 bytes
   */
  public static ByteBuf concat(List<ByteBuf> blocks, ByteBufAllocator alloc) throws CodecException {
    long total = 0;
    long elements = 0;
    int n = blocks.size();
    // Indexed loops: no iterator per join (the lanes pass array lists).
    for (int i = 0; i < n; i++) {
      ByteBuf b = blocks.get(i);
      total += declaredLength(b);
      elements += b.readableBytes() - preambleBytes(b);
    }
    if (total > 0xFFFF_FFFFL) {
      throw new CodecException(
          CodecException.Problem.TOO_LARGE,
          "joined snappy blocks would declare " + total + " bytes, more than a block can");
    }
    long size = varintBytes(total) + elements;
    if (size > Integer.MAX_VALUE) {
      throw new CodecException(
          CodecException.Problem.TOO_LARGE, "joined snappy blocks take " + size + " bytes");
    }
    ByteBuf out = alloc.heapBuffer((int) size, (int) size);
    for (long v = total; ; v >>>= 7) {
      if (v < 0x80) {
        out.writeByte((int) v);
        break;
      }
      out.writeByte((int) (v & 0x7F) | 0x80);
    }
    for (int i = 0; i < n; i++) {
      ByteBuf b = blocks.get(i);
      int skip = preambleBytes(b);
      out.writeBytes(b, b.readerIndex() + skip, b.readableBytes() - skip);
    }
    return out;
  }

  /** Bytes of the block's length preamble (the block's preamble must be valid). */
  private static int preambleBytes(ByteBuf in) {
    int i = in.readerIndex();
    while ((in.getByte(i) & 0x80) != 0) {
      i++;
    }
    return i - in.readerIndex() + 1;
  }

  private static int varintBytes(long v) {
    int n = 1;
    while (v >= 0x80) {
      v >>>= 7;
      n++;
    }
    return n;
  }

  /** Reads the block's declared uncompressed length (an unsigned varint of at most 32 bits). */
  public static long declaredLength(ByteBuf in) throws CodecException {
    long value = 0;
    int index = in.readerIndex();
    int end = in.writerIndex();
    for (int shift = 0; shift < 35; shift += 7) {
      if (index >= end) {
        throw corrupt(in.readableBytes() == 0 ? "empty body" : "truncated snappy length preamble");
      }
      int b = in.getByte(index++);
      value |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        if (value > 0xFFFF_FFFFL) {
          break;
        }
        return value;
      }
    }
    throw corrupt("malformed snappy length preamble");
  }

  static CodecException overBudget(long bytes) {
    return new CodecException(
        CodecException.Problem.OVER_BUDGET,
        "no memory for the " + bytes + " bytes the body decompresses to");
  }

  private static CodecException corrupt(String message) {
    return new CodecException(CodecException.Problem.CORRUPT, message);
  }
}
