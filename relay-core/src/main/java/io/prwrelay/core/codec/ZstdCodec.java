package io.prwrelay.core.codec;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.core.wire.HeapBuffers;

/**
 * Zstandard decompression via zstd-jni, capped.
 *
 * <p>A single frame that declares its content size is checked against the cap before allocating and
 * then decompressed in one call into a buffer of exactly that size. Frames without a declared size
 * (streaming compressors) and concatenated frames are decompressed into a buffer that starts at
 * {@value #INITIAL_GUESS_FACTOR}× the compressed size and grows fourfold while the output does not
 * fit, never beyond the cap; past the cap the body is rejected. Holds a native decompression
 * context: one instance per thread, {@link #close()} when done.
 */
public final class ZstdCodec implements AutoCloseable {
  static final int INITIAL_GUESS_FACTOR = 8;
  private static final int MIN_GUESS = 64 * 1024;
  private static final long CONTENT_SIZE_UNKNOWN = -1;

  private static final long DST_SIZE_TOO_SMALL = Zstd.errDstSizeTooSmall();

  private final ZstdDecompressCtx ctx = new ZstdDecompressCtx();

  /**
   * Decompresses a zstd body.
   *
   * @param in borrowed; the frame(s) between reader and writer index (left unchanged)
   * @param maxDecompressed cap on the decompressed size
   * @return a heap buffer the caller owns and must release
   * @throws CodecException {@code TOO_LARGE} above the cap, {@code CORRUPT} when the frames are
   *     invalid
   */
  public ByteBuf decode(ByteBuf in, ByteBufAllocator alloc, int maxDecompressed)
      throws CodecException {
    return decode(in, alloc, maxDecompressed, MemoryGrant.UNLIMITED);
  }

  /**
   * Decompresses a zstd body, asking {@code grant} before each output buffer: the declared content
   * size of a single frame, or each size tried while the output grows.
   *
   * @param in borrowed; the frame(s) between reader and writer index (left unchanged)
   * @param maxDecompressed cap on the decompressed size
   * @param grant asked for each output buffer's size before it is allocated
   * @return a heap buffer the caller owns and must release
   * @throws CodecException {@code TOO_LARGE} above the cap, {@code OVER_BUDGET} when the grant
   *     refused, {@code CORRUPT} when the frames are invalid
   */
  public ByteBuf decode(ByteBuf in, ByteBufAllocator alloc, int maxDecompressed, MemoryGrant grant)
      throws CodecException {
    ByteBuf src = HeapBuffers.heap(in, alloc);
    try {
      byte[] a = src.array();
      int off = src.arrayOffset() + src.readerIndex();
      int len = src.readableBytes();
      if (len == 0) {
        throw corrupt("empty body");
      }
      long contentSize = Zstd.getFrameContentSize(a, off, len);
      if (contentSize < CONTENT_SIZE_UNKNOWN) {
        throw corrupt("invalid zstd frame header");
      }
      if (contentSize > maxDecompressed) {
        throw tooLarge(
            "zstd frame declares " + contentSize + " decompressed bytes, more", maxDecompressed);
      }
      if (contentSize >= 0 && Zstd.findFrameCompressedSize(a, off, len) == len) {
        return decompress(alloc, a, off, len, (int) contentSize, true, grant);
      }
      long guess = Math.max(MIN_GUESS, (long) len * INITIAL_GUESS_FACTOR);
      int size = (int) Math.min(maxDecompressed, Math.max(guess, Math.max(contentSize, 0)));
      while (true) {
        ByteBuf out = decompress(alloc, a, off, len, size, false, grant);
        if (out != null) {
          return out;
        }
        if (size >= maxDecompressed) {
          throw tooLarge("zstd body decompresses to more bytes", maxDecompressed);
        }
        size = (int) Math.min(maxDecompressed, (long) size * 4);
      }
    } catch (ZstdException e) {
      throw corrupt("invalid zstd data (" + e.getMessage() + ")");
    } finally {
      if (src != in) {
        src.release();
      }
    }
  }

  /** Returns the output, or {@code null} when it did not fit and {@code exact} is false. */
  private ByteBuf decompress(
      ByteBufAllocator alloc,
      byte[] a,
      int off,
      int len,
      int size,
      boolean exact,
      MemoryGrant grant)
      throws CodecException {
    if (!grant.reserve(size)) {
      throw SnappyCodec.overBudget(size);
    }
    ByteBuf out = alloc.heapBuffer(size, size);
    boolean ok = false;
    try {
      int n = ctx.decompressByteArray(out.array(), out.arrayOffset(), size, a, off, len);
      if (exact && n != size) {
        throw corrupt("decompressed " + n + " bytes, frame declared " + size);
      }
      out.writerIndex(n);
      ok = true;
      return out;
    } catch (ZstdException e) {
      ctx.reset();
      if (!exact && e.getErrorCode() == DST_SIZE_TOO_SMALL) {
        return null;
      }
      throw corrupt("invalid zstd data (" + e.getMessage() + ")");
    } finally {
      if (!ok) {
        out.release();
      }
    }
  }

  @Override
  public void close() {
    ctx.close();
  }

  private static CodecException corrupt(String message) {
    return new CodecException(CodecException.Problem.CORRUPT, message);
  }

  private static CodecException tooLarge(String what, int max) {
    return new CodecException(CodecException.Problem.TOO_LARGE, what + " than the limit of " + max);
  }
}
