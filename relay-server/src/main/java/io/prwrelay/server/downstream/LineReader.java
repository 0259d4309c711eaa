package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;

/**
 * The lines of one downstream connection's bytes, for {@link ResponseParser}: each line is handed
 * over where it lies, as a buffer and its bounds with the CR and LF cut off, so a line whole in one
 * read is read without a copy or an allocation.
 *
 * <p>State: {@code partial} holds the start of a line whose LF has not arrived yet, or is {@code
 * null}; {@code line}, {@code start} and {@code end} name the line last read, in the input or in
 * {@code partial}. Invariants:
 *
 * <ul>
 *   <li>{@code partial} is never empty: it is allocated (on the input's allocator, as a heap
 *       buffer) only when a read ends inside a line, and released by {@link #done()} as soon as the
 *       line it held has been handled.
 *   <li>The line read is valid until {@link #done()} or the next {@link #next}; a line in the input
 *       only while the input is not written to or released.
 *   <li>A line is at most its bound long, CR excluded; a line without its LF yet is refused as soon
 *       as it cannot end within its bound (a line of exactly the bound may still have its CR here).
 *   <li>Lines end in CRLF or a bare LF; only the one CR right before the LF is cut off.
 * </ul>
 *
 * One instance per connection, used on its event loop only.
 */
final class LineReader {
  /** The start of a line whose end has not arrived yet, or {@code null}. */
  private ByteBuf partial;

  /** The line just read: in the input or in {@link #partial}, or {@code null} once handled. */
  private ByteBuf line;

  private int start;
  private int end;

  /**
   * Reads the next line of {@code in}, after what an earlier read left in {@code partial}; without
   * its end, keeps what there is for the next call.
   *
   * @param in borrowed; read up to and including the line's LF, or to its end when there is none
   * @param limit longest line accepted, CR and LF excluded
   * @param what what a line past {@code limit} is, for the {@link ResponseParser.Malformed} message
   * @return true when a line was read: see {@link #line()}, {@link #start()}, {@link #end()}; false
   *     when its end has not arrived
   * @throws ResponseParser.Malformed the line is longer than {@code limit}
   */
  boolean next(ByteBuf in, int limit, String what) throws ResponseParser.Malformed {
    int from = in.readerIndex();
    int lf = in.indexOf(from, in.writerIndex(), (byte) '\n');
    int held = partial == null ? 0 : partial.readableBytes();
    if (lf < 0) {
      // Without its end yet: a line of the limit's length may still have its CR here.
      if (held + in.readableBytes() > limit + 1) {
        throw tooLong(what);
      }
      if (in.isReadable()) {
        if (partial == null) {
          partial = in.alloc().heapBuffer(Math.max(64, in.readableBytes()));
        }
        partial.writeBytes(in);
      }
      return false;
    }
    if (partial == null) {
      line = in;
      start = from;
      end = lf;
    } else {
      partial.writeBytes(in, from, lf - from);
      line = partial;
      start = partial.readerIndex();
      end = partial.writerIndex();
    }
    in.readerIndex(lf + 1);
    if (end > start && line.getByte(end - 1) == '\r') {
      end--;
    }
    if (end - start > limit) {
      throw tooLong(what);
    }
    return true;
  }

  private static ResponseParser.Malformed tooLong(String what) {
    return new ResponseParser.Malformed("malformed response: " + what);
  }

  /** The buffer the line read lies in; the reader (or the caller, for the input) owns it. */
  ByteBuf line() {
    return line;
  }

  /** The index of the line's first byte in {@link #line()}. */
  int start() {
    return start;
  }

  /** The index after the line's last byte in {@link #line()}, CR and LF excluded. */
  int end() {
    return end;
  }

  /** Whether the line read is empty: the end of a header or trailer section. */
  boolean isEmpty() {
    return end == start;
  }

  /** The line read is handled: a line kept in {@code partial} is dropped with its buffer. */
  void done() {
    if (line == partial && partial != null) {
      partial.release();
      partial = null;
    }
    line = null;
  }

  /** True while the start of a line waits for its end. */
  boolean holdsPartial() {
    return partial != null;
  }

  /** Releases what the reader holds; it is not used again. */
  void release() {
    if (partial != null) {
      partial.release();
      partial = null;
    }
    line = null;
  }

  /** HTTP's optional whitespace: a space or a horizontal tab. */
  static boolean isSpace(byte b) {
    return b == ' ' || b == '\t';
  }
}
