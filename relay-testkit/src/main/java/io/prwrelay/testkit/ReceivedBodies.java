package io.prwrelay.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.xerial.snappy.Snappy;
import org.xerial.snappy.SnappyError;

/**
 * Reading what a remote-write sender POSTed, as a downstream does: snappy block decompression with
 * snappy-java into a pooled buffer, and a count of the series in a {@code WriteRequest} (PRW 1.0)
 * or {@code Request} (PRW 2.0) from its field framing, without decoding labels or samples.
 */
final class ReceivedBodies {
  /** {@code WriteRequest.timeseries} (PRW 1.0) and {@code Request.timeseries} (PRW 2.0). */
  private static final int V1_SERIES = 1;

  private static final int V2_SERIES = 5;

  private ReceivedBodies() {}

  /**
   * Decompresses the snappy block {@code in} (borrowed; its indexes are not changed) into a new
   * buffer from {@code alloc}, which the caller owns.
   *
   * @throws IOException when the block is corrupt or would decompress to more than {@code max}
   */
  static ByteBuf decompress(ByteBuf in, ByteBufAllocator alloc, int max) throws IOException {
    if (in.hasArray()) {
      byte[] array = in.array();
      int offset = in.arrayOffset() + in.readerIndex();
      int length = in.readableBytes();
      ByteBuf out =
          alloc.heapBuffer(checked(Snappy.uncompressedLength(array, offset, length), max));
      try {
        int n = Snappy.uncompress(array, offset, length, out.array(), out.arrayOffset());
        return out.writerIndex(n);
      } catch (IOException | SnappyError | RuntimeException e) {
        out.release();
        throw e instanceof IOException ? (IOException) e : new IOException(e.getMessage(), e);
      }
    }
    if (!in.isDirect() || in.nioBufferCount() != 1) {
      ByteBuf copy = alloc.directBuffer(in.readableBytes());
      try {
        return decompress(copy.writeBytes(in, in.readerIndex(), in.readableBytes()), alloc, max);
      } finally {
        copy.release();
      }
    }
    ByteBuffer source = in.nioBuffer();
    int length;
    try {
      length = checked(Snappy.uncompressedLength(source), max);
    } catch (SnappyError | RuntimeException e) {
      throw new IOException(e.getMessage(), e);
    }
    ByteBuf out = alloc.directBuffer(length);
    try {
      return out.writerIndex(Snappy.uncompress(source, out.nioBuffer(0, length)));
    } catch (IOException | SnappyError | RuntimeException e) {
      out.release();
      throw e instanceof IOException ? (IOException) e : new IOException(e.getMessage(), e);
    }
  }

  private static int checked(int length, int max) throws IOException {
    if (length < 0 || length > max) {
      throw new IOException("declared length " + length + " exceeds the cap of " + max + " bytes");
    }
    return length;
  }

  /**
   * Series in the request in {@code body} (borrowed), whose top-level fields and the fields of each
   * series must be well framed.
   *
   * @param v2 whether the body is a PRW 2.0 {@code Request} rather than a PRW 1.0 {@code
   *     WriteRequest}
   * @return the count, or -1 when the framing is broken
   */
  static int countSeries(ByteBuf body, boolean v2) {
    int seriesField = v2 ? V2_SERIES : V1_SERIES;
    int series = 0;
    int[] content = new int[1];
    for (int at = body.readerIndex(), end = body.writerIndex(); at < end; ) {
      long tag = varint(body, at, end, content);
      int next = content[0] < 0 ? -1 : skip(body, content[0], end, (int) tag & 7, content);
      if (next < 0) {
        return -1;
      }
      if (tag >>> 3 == seriesField && (tag & 7) == 2) {
        for (int field = content[0]; field < next; ) {
          long inner = varint(body, field, next, content);
          field = content[0] < 0 ? -1 : skip(body, content[0], next, (int) inner & 7, content);
          if (field < 0) {
            return -1;
          }
        }
        series++;
      }
      at = next;
    }
    return series;
  }

  /**
   * Skips the value of a field of {@code wireType} that starts at {@code at}; returns where the
   * next field starts, or -1 when it runs past {@code end} or the wire type is not one PRW uses.
   * For a length-delimited field, {@code content[0]} is left where its content starts.
   */
  private static int skip(ByteBuf b, int at, int end, int wireType, int[] content) {
    long next;
    switch (wireType) {
      case 0:
        varint(b, at, end, content);
        next = content[0];
        break;
      case 1:
        next = at + 8L;
        break;
      case 2:
        long length = varint(b, at, end, content);
        next = content[0] < 0 || length < 0 ? -1 : content[0] + length;
        break;
      case 5:
        next = at + 4L;
        break;
      default:
        return -1;
    }
    return next < 0 || next > end ? -1 : (int) next;
  }

  /**
   * The varint that starts at {@code at}; {@code next[0]} is set to the index after it, or to -1
   * when it is longer than ten bytes or runs past {@code end}.
   */
  private static long varint(ByteBuf b, int at, int end, int[] next) {
    long value = 0;
    for (int shift = 0; shift < 70 && at < end; shift += 7) {
      byte x = b.getByte(at++);
      value |= (long) (x & 0x7F) << shift;
      if (x >= 0) {
        next[0] = at;
        return value;
      }
    }
    next[0] = -1;
    return 0;
  }
}
