package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.server.protocol.WrittenCounts;

/**
 * Reads the HTTP/1.1 responses of one downstream connection from its bytes, one at a time, keeping
 * only what an {@link AttemptOutcome} needs: the status, the body (up to a bound), {@code
 * Retry-After}, the Remote Write 2.0 {@code *-Written} counts, and whether the connection stays
 * open. A response without a body, {@code Retry-After} or {@code *-Written} headers allocates
 * nothing; the others allocate their body buffer and the header values they keep.
 *
 * <ul>
 *   <li>Framing: {@code Transfer-Encoding} ending in {@code chunked} (chunk extensions and trailers
 *       are skipped), else {@code Content-Length}, else the body runs to the connection's close.
 *       1xx, 204 and 304 have no body; an interim 1xx (not 101) is skipped and the final response
 *       read after it.
 *   <li>Keep-alive: HTTP/1.1 unless {@code Connection: close}; HTTP/1.0 only with {@code
 *       Connection: keep-alive}; never after a body that ran to the close, or a response with both
 *       {@code Transfer-Encoding} and {@code Content-Length}.
 *   <li>Bounds: status line {@value #MAX_LINE} bytes, header lines (and trailers) {@value
 *       #MAX_HEADERS} bytes together, chunk-size lines {@value #MAX_LINE} bytes, the body {@code
 *       maxBody} bytes (checked against {@code Content-Length} before it is read). A response past
 *       a bound, or one that breaks the syntax, is {@link Malformed}: the connection is out of step
 *       and must close.
 *   <li>Lines end in CRLF or a bare LF. Header names are matched without regard to case; a folded
 *       continuation line is skipped unless it continues one of the headers read here, which is
 *       malformed.
 * </ul>
 *
 * <p>The parser is the framing state machine ({@link State}, every transition in {@link #read});
 * its two parts are reused for every response, so they add nothing per response: a {@link
 * LineReader} hands it each line in place, keeping the bytes of a line split across reads in a
 * small buffer that is released as soon as the line is handled, and a {@link ResponseHead} reads
 * the status line and the headers kept. One instance per connection, used on its event loop only.
 */
final class ResponseParser {
  /** Longest status line or chunk-size line, as Netty's default initial line bound. */
  static final int MAX_LINE = 4096;

  /** Largest header section (or trailer section) of one response, as Netty's default. */
  static final int MAX_HEADERS = 8192;

  /** Thrown for a response that breaks HTTP/1.1's syntax or a bound; its message says which. */
  static final class Malformed extends Exception {
    Malformed(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Where the parser is in a response. {@code STATUS} (empty lines skipped) then {@code HEADERS};
   * at the empty line the head decides: {@code DONE} for a response without a body, {@code FIXED}
   * for a {@code Content-Length}, {@code CHUNK_SIZE} for chunked, else {@code UNTIL_CLOSE}; an
   * interim 1xx goes back to {@code STATUS}. Chunked runs {@code CHUNK_SIZE}, {@code CHUNK_DATA},
   * {@code CHUNK_END} (the CRLF after the data) per chunk, and {@code TRAILERS} after the last. The
   * connection's close ends {@code UNTIL_CLOSE}, or cuts a body short, with {@code DONE}.
   */
  private enum State {
    STATUS,
    HEADERS,
    FIXED,
    CHUNK_SIZE,
    CHUNK_DATA,
    CHUNK_END,
    TRAILERS,
    UNTIL_CLOSE,
    DONE
  }

  private final int maxBody;
  private final LineReader lines = new LineReader();
  private final ResponseHead head = new ResponseHead();
  private State state = State.STATUS;

  /** Bytes of the header (or trailer) section read so far, each line counted with its CRLF. */
  private int headerBytes;

  /** Bytes of the fixed body or of the chunk left to read. */
  private long remaining;

  /** The body so far, or {@code null} until a byte of it is read. */
  private ByteBuf body;

  /**
   * @param maxBody largest body kept; a longer one is {@link Malformed}
   */
  ResponseParser(int maxBody) {
    this.maxBody = maxBody;
    reset();
  }

  /**
   * Reads {@code in} until a response is complete or {@code in} is used up.
   *
   * @param in borrowed; read as far as the end of the response, the bytes after it stay
   * @return true when a response is complete: its parts can be read until {@link #reset()}
   * @throws Malformed the response breaks the syntax or a bound; the parser must not be used again
   */
  boolean read(ByteBuf in, ByteBufAllocator alloc) throws Malformed {
    while (true) {
      switch (state) {
        case STATUS -> {
          if (!lines.next(in, MAX_LINE, "status line longer than " + MAX_LINE + " bytes")) {
            return false;
          }
          if (!lines.isEmpty()) {
            head.statusLine(lines.line(), lines.start(), lines.end());
            state = State.HEADERS;
          } // empty lines before a status line are skipped, as Netty's decoder did
          lines.done();
        }
        case HEADERS -> {
          if (!lines.next(
              in, MAX_HEADERS - headerBytes, "headers longer than " + MAX_HEADERS + " bytes")) {
            return false;
          }
          headerBytes += lines.end() - lines.start() + 2;
          if (lines.isEmpty()) {
            lines.done();
            if (endOfHead()) {
              return true;
            }
          } else {
            head.header(lines.line(), lines.start(), lines.end());
            lines.done();
          }
        }
        case FIXED, CHUNK_DATA -> {
          int n = (int) Math.min(remaining, in.readableBytes());
          if (n == 0) {
            return false;
          }
          keep(in, n, alloc);
          remaining -= n;
          if (remaining == 0) {
            if (state == State.FIXED) {
              state = State.DONE;
              return true;
            }
            state = State.CHUNK_END;
          }
        }
        case CHUNK_SIZE -> {
          if (!lines.next(in, MAX_LINE, "chunk size line longer than " + MAX_LINE + " bytes")) {
            return false;
          }
          remaining = chunkSize();
          lines.done();
          state = remaining == 0 ? State.TRAILERS : State.CHUNK_DATA;
          headerBytes = 0;
        }
        case CHUNK_END -> {
          if (!lines.next(in, MAX_LINE, "chunk longer than its size")) {
            return false;
          }
          if (!lines.isEmpty()) {
            throw new Malformed("malformed response: chunk longer than its size");
          }
          lines.done();
          state = State.CHUNK_SIZE;
        }
        case TRAILERS -> {
          if (!lines.next(
              in, MAX_HEADERS - headerBytes, "trailers longer than " + MAX_HEADERS + " bytes")) {
            return false;
          }
          headerBytes += lines.end() - lines.start() + 2;
          boolean end = lines.isEmpty();
          lines.done();
          if (end) {
            state = State.DONE;
            return true;
          }
        }
        case UNTIL_CLOSE -> {
          if (in.isReadable()) {
            keep(in, in.readableBytes(), alloc);
          }
          return false;
        }
        case DONE -> {
          return true;
        }
      }
    }
  }

  /**
   * The connection closed: true when that ends the response being read — its body runs to the
   * close, or its head was read and the body was cut short (the status stands, with the body so
   * far). False when no head was read.
   */
  boolean closed() {
    if (state == State.STATUS || state == State.HEADERS) {
      return false;
    }
    state = State.DONE;
    head.closeConnection();
    return true;
  }

  /** True while part of a response (or of a line) has been read. */
  boolean inResponse() {
    return state != State.STATUS || lines.holdsPartial();
  }

  int status() {
    return head.status();
  }

  /** The body so far, or {@code null} for none; the parser keeps owning it. */
  ByteBuf body() {
    return body;
  }

  /** {@code Retry-After}'s value, or {@code null}. */
  String retryAfter() {
    return head.retryAfter();
  }

  /** The {@code *-Written} counts, or {@code null} when none of the three was there (or valid). */
  WrittenCounts written() {
    return head.written();
  }

  /** Whether the connection can carry another request after this response. */
  boolean keepAlive() {
    return head.keepAlive();
  }

  /** Forgets the response read (releasing its body) and waits for the next one. */
  void reset() {
    state = State.STATUS;
    head.reset();
    headerBytes = 0;
    remaining = 0;
    if (body != null) {
      body.release();
      body = null;
    }
  }

  /** Releases what the parser holds; it is not used again. */
  void release() {
    reset();
    lines.release();
  }

  /** The head is complete: decides how the body is framed. True when the response is complete. */
  private boolean endOfHead() throws Malformed {
    int status = head.status();
    if (status < 200) {
      if (status == 101) {
        throw new Malformed("malformed response: 101 Switching Protocols to a write");
      }
      // An interim response: the final one follows.
      reset();
      return false;
    }
    if (status == 204 || status == 304) {
      state = State.DONE;
      return true;
    }
    if (head.transferEncoding()) {
      if (head.chunked()) {
        state = State.CHUNK_SIZE;
      } else {
        head.closeConnection();
        state = State.UNTIL_CLOSE;
      }
      headerBytes = 0;
      return false;
    }
    long contentLength = head.contentLength();
    if (contentLength > maxBody) {
      throw new Malformed("response body larger than " + maxBody + " bytes");
    }
    if (contentLength == 0) {
      state = State.DONE;
      return true;
    }
    if (contentLength > 0) {
      remaining = contentLength;
      state = State.FIXED;
    } else {
      head.closeConnection();
      state = State.UNTIL_CLOSE;
    }
    return false;
  }

  /** A chunk-size line: hex digits, then optionally {@code ;extensions}. */
  private long chunkSize() throws Malformed {
    ByteBuf line = lines.line();
    int end = lines.end();
    long size = 0;
    int i = lines.start();
    int digits = 0;
    for (; i < end; i++) {
      int d = Character.digit(line.getByte(i), 16);
      if (d < 0) {
        break;
      }
      if (++digits > 15) {
        throw new Malformed("malformed response: chunk size too large");
      }
      size = size * 16 + d;
    }
    while (i < end && LineReader.isSpace(line.getByte(i))) {
      i++;
    }
    if (digits == 0 || (i < end && line.getByte(i) != ';')) {
      throw new Malformed("malformed response: bad chunk size");
    }
    return size;
  }

  /**
   * Keeps {@code n} bytes of {@code in} as body.
   *
   * @param in borrowed; {@code n} bytes are read from it
   * @throws Malformed past {@code maxBody}
   */
  private void keep(ByteBuf in, int n, ByteBufAllocator alloc) throws Malformed {
    int held = body == null ? 0 : body.readableBytes();
    if ((long) held + n > maxBody) {
      throw new Malformed("response body larger than " + maxBody + " bytes");
    }
    if (body == null) {
      body = alloc.heapBuffer(state == State.FIXED ? (int) remaining : n);
    }
    body.writeBytes(in, n);
  }
}
