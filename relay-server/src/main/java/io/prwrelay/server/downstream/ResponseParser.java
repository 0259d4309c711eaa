package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

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
 * <p>Bytes of a line split across reads are kept in a small buffer until the line is whole; it is
 * released as soon as it is empty. One instance per connection, used on its event loop only.
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

  /** Header names read here, lower case; the index is what {@link #header} switches on. */
  private static final byte[][] NAMES = {
    ascii("content-length"),
    ascii("transfer-encoding"),
    ascii("connection"),
    ascii("retry-after"),
    ascii(WrittenCounts.SAMPLES_HEADER.toLowerCase()),
    ascii(WrittenCounts.HISTOGRAMS_HEADER.toLowerCase()),
    ascii(WrittenCounts.EXEMPLARS_HEADER.toLowerCase()),
  };

  private static final byte[] CHUNKED = ascii("chunked");
  private static final byte[] CLOSE = ascii("close");
  private static final byte[] KEEP_ALIVE = ascii("keep-alive");

  private final int maxBody;
  private State state = State.STATUS;

  /** The start of a line whose end has not arrived yet, or {@code null}. */
  private ByteBuf partial;

  /** The line just read: in the input or in {@link #partial}, CR and LF cut off. */
  private ByteBuf line;

  private int lineStart;
  private int lineEnd;

  // The response being read.
  private int status;
  private boolean http10;
  private long contentLength;
  private boolean transferEncoding;
  private boolean chunked;
  private boolean connectionClose;
  private boolean connectionKeepAlive;
  private boolean lastHeaderRead;
  private String retryAfter;
  private long samplesWritten;
  private long histogramsWritten;
  private long exemplarsWritten;
  private int headerBytes;
  private long remaining;
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
          if (!nextLine(in, MAX_LINE, "status line longer than " + MAX_LINE + " bytes")) {
            return false;
          }
          if (lineEnd > lineStart) {
            statusLine();
            state = State.HEADERS;
          } // empty lines before a status line are skipped, as Netty's decoder did
          lineDone();
        }
        case HEADERS -> {
          if (!nextLine(
              in, MAX_HEADERS - headerBytes, "headers longer than " + MAX_HEADERS + " bytes")) {
            return false;
          }
          headerBytes += lineEnd - lineStart + 2;
          if (lineEnd == lineStart) {
            lineDone();
            if (endOfHead()) {
              return true;
            }
          } else {
            header();
            lineDone();
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
          if (!nextLine(in, MAX_LINE, "chunk size line longer than " + MAX_LINE + " bytes")) {
            return false;
          }
          remaining = chunkSize();
          lineDone();
          state = remaining == 0 ? State.TRAILERS : State.CHUNK_DATA;
          headerBytes = 0;
        }
        case CHUNK_END -> {
          if (!nextLine(in, MAX_LINE, "chunk longer than its size")) {
            return false;
          }
          if (lineEnd != lineStart) {
            throw new Malformed("malformed response: chunk longer than its size");
          }
          lineDone();
          state = State.CHUNK_SIZE;
        }
        case TRAILERS -> {
          if (!nextLine(
              in, MAX_HEADERS - headerBytes, "trailers longer than " + MAX_HEADERS + " bytes")) {
            return false;
          }
          headerBytes += lineEnd - lineStart + 2;
          boolean end = lineEnd == lineStart;
          lineDone();
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
    connectionClose = true;
    return true;
  }

  /** True while part of a response (or of a line) has been read. */
  boolean inResponse() {
    return state != State.STATUS || partial != null;
  }

  int status() {
    return status;
  }

  /** The body so far, or {@code null} for none; the parser keeps owning it. */
  ByteBuf body() {
    return body;
  }

  /** {@code Retry-After}'s value, or {@code null}. */
  String retryAfter() {
    return retryAfter;
  }

  /** The {@code *-Written} counts, or {@code null} when none of the three was there (or valid). */
  WrittenCounts written() {
    return samplesWritten < 0 && histogramsWritten < 0 && exemplarsWritten < 0
        ? null
        : new WrittenCounts(samplesWritten, histogramsWritten, exemplarsWritten);
  }

  /** Whether the connection can carry another request after this response. */
  boolean keepAlive() {
    if (connectionClose || (transferEncoding && contentLength >= 0)) {
      return false;
    }
    return http10 ? connectionKeepAlive : true;
  }

  /** Forgets the response read (releasing its body) and waits for the next one. */
  void reset() {
    state = State.STATUS;
    status = 0;
    http10 = false;
    contentLength = -1;
    transferEncoding = false;
    chunked = false;
    connectionClose = false;
    connectionKeepAlive = false;
    lastHeaderRead = false;
    retryAfter = null;
    samplesWritten = -1;
    histogramsWritten = -1;
    exemplarsWritten = -1;
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
    if (partial != null) {
      partial.release();
      partial = null;
    }
  }

  /**
   * The next line of {@code in} (after what {@link #partial} holds) into {@link #line}, {@link
   * #lineStart} and {@link #lineEnd}; without its end, what there is goes to {@link #partial}.
   *
   * @return false when the line's end has not arrived
   */
  private boolean nextLine(ByteBuf in, int limit, String what) throws Malformed {
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
      lineStart = from;
      lineEnd = lf;
    } else {
      partial.writeBytes(in, from, lf - from);
      line = partial;
      lineStart = partial.readerIndex();
      lineEnd = partial.writerIndex();
    }
    in.readerIndex(lf + 1);
    if (lineEnd > lineStart && line.getByte(lineEnd - 1) == '\r') {
      lineEnd--;
    }
    if (lineEnd - lineStart > limit) {
      throw tooLong(what);
    }
    return true;
  }

  private static Malformed tooLong(String what) {
    return new Malformed("malformed response: " + what);
  }

  /** The line read is handled: a line kept in {@link #partial} is dropped with its buffer. */
  private void lineDone() {
    if (line == partial && partial != null) {
      partial.release();
      partial = null;
    }
    line = null;
  }

  /** {@code HTTP/1.x SP 3DIGIT [SP reason]}. */
  private void statusLine() throws Malformed {
    int n = lineEnd - lineStart;
    if (n < 12
        || !startsWith(line, lineStart, "HTTP/1.")
        || line.getByte(lineStart + 8) != ' '
        || (n > 12 && line.getByte(lineStart + 12) != ' ')) {
      throw new Malformed("malformed response: bad status line");
    }
    byte minor = line.getByte(lineStart + 7);
    if (minor != '0' && minor != '1') {
      throw new Malformed("malformed response: unsupported HTTP version");
    }
    http10 = minor == '0';
    int code = 0;
    for (int i = lineStart + 9; i < lineStart + 12; i++) {
      byte b = line.getByte(i);
      if (b < '0' || b > '9') {
        throw new Malformed("malformed response: bad status code");
      }
      code = code * 10 + (b - '0');
    }
    if (code < 100) {
      throw new Malformed("malformed response: bad status code");
    }
    status = code;
  }

  /** One header line: its name matched against {@link #NAMES}, the value of a match read. */
  private void header() throws Malformed {
    byte first = line.getByte(lineStart);
    if (first == ' ' || first == '\t') {
      // obs-fold: continues the header before it
      if (lastHeaderRead) {
        throw new Malformed("malformed response: folded header line");
      }
      return;
    }
    int colon = line.indexOf(lineStart, lineEnd, (byte) ':');
    if (colon <= lineStart) {
      throw new Malformed("malformed response: header line without a name");
    }
    int nameEnd = colon;
    while (nameEnd > lineStart && isSpace(line.getByte(nameEnd - 1))) {
      nameEnd--;
    }
    int which = -1;
    for (int i = 0; i < NAMES.length; i++) {
      if (equalsIgnoreCase(line, lineStart, nameEnd, NAMES[i])) {
        which = i;
        break;
      }
    }
    lastHeaderRead = which >= 0;
    if (which < 0) {
      return;
    }
    int from = colon + 1;
    int to = lineEnd;
    while (from < to && isSpace(line.getByte(from))) {
      from++;
    }
    while (to > from && isSpace(line.getByte(to - 1))) {
      to--;
    }
    switch (which) {
      case 0 -> contentLength(from, to);
      case 1 -> {
        transferEncoding = true;
        chunked = lastTokenIs(from, to, CHUNKED);
      }
      case 2 -> {
        connectionClose |= hasToken(from, to, CLOSE);
        connectionKeepAlive |= hasToken(from, to, KEEP_ALIVE);
      }
      case 3 -> retryAfter = line.toString(from, to - from, StandardCharsets.ISO_8859_1);
      case 4 -> samplesWritten = count(from, to);
      case 5 -> histogramsWritten = count(from, to);
      default -> exemplarsWritten = count(from, to);
    }
  }

  /** {@code Content-Length}: digits; repeated (or as a list) only with the same value. */
  private void contentLength(int from, int to) throws Malformed {
    long value = -1;
    for (int i = from; i <= to; i++) {
      if (i == to || line.getByte(i) == ',') {
        int end = i;
        int start = from;
        while (start < end && isSpace(line.getByte(start))) {
          start++;
        }
        while (end > start && isSpace(line.getByte(end - 1))) {
          end--;
        }
        long v = digits(start, end);
        if (v < 0 || (value >= 0 && v != value) || (contentLength >= 0 && v != contentLength)) {
          throw new Malformed("malformed response: bad Content-Length");
        }
        value = v;
        from = i + 1;
      }
    }
    contentLength = value;
  }

  /** The decimal number in {@code [from, to)}, or -1 when it is empty, not digits, or too long. */
  private long digits(int from, int to) {
    if (from == to || to - from > 18) {
      return -1;
    }
    long n = 0;
    for (int i = from; i < to; i++) {
      byte b = line.getByte(i);
      if (b < '0' || b > '9') {
        return -1;
      }
      n = n * 10 + (b - '0');
    }
    return n;
  }

  /** A {@code *-Written} count: as {@link WrittenCounts#of} reads one, -1 when not a count. */
  private long count(int from, int to) {
    boolean plus = from < to && line.getByte(from) == '+';
    return digits(plus ? from + 1 : from, to);
  }

  /** The head is complete: decides how the body is framed. True when the response is complete. */
  private boolean endOfHead() throws Malformed {
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
    if (transferEncoding) {
      if (chunked) {
        state = State.CHUNK_SIZE;
      } else {
        connectionClose = true;
        state = State.UNTIL_CLOSE;
      }
      headerBytes = 0;
      return false;
    }
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
      connectionClose = true;
      state = State.UNTIL_CLOSE;
    }
    return false;
  }

  /** A chunk-size line: hex digits, then optionally {@code ;extensions}. */
  private long chunkSize() throws Malformed {
    long size = 0;
    int i = lineStart;
    int digits = 0;
    for (; i < lineEnd; i++) {
      int d = Character.digit(line.getByte(i), 16);
      if (d < 0) {
        break;
      }
      if (++digits > 15) {
        throw new Malformed("malformed response: chunk size too large");
      }
      size = size * 16 + d;
    }
    while (i < lineEnd && isSpace(line.getByte(i))) {
      i++;
    }
    if (digits == 0 || (i < lineEnd && line.getByte(i) != ';')) {
      throw new Malformed("malformed response: bad chunk size");
    }
    return size;
  }

  /**
   * Keeps {@code n} bytes of {@code in} as body.
   *
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

  /** Whether the comma-separated list in {@code [from, to)} ends with {@code token}. */
  private boolean lastTokenIs(int from, int to, byte[] token) {
    int comma = to;
    while (comma > from && line.getByte(comma - 1) != ',') {
      comma--;
    }
    return trimmedEquals(comma, to, token);
  }

  /** Whether the comma-separated list in {@code [from, to)} has {@code token}. */
  private boolean hasToken(int from, int to, byte[] token) {
    int start = from;
    for (int i = from; i <= to; i++) {
      if (i == to || line.getByte(i) == ',') {
        if (trimmedEquals(start, i, token)) {
          return true;
        }
        start = i + 1;
      }
    }
    return false;
  }

  private boolean trimmedEquals(int from, int to, byte[] token) {
    while (from < to && isSpace(line.getByte(from))) {
      from++;
    }
    while (to > from && isSpace(line.getByte(to - 1))) {
      to--;
    }
    return equalsIgnoreCase(line, from, to, token);
  }

  private static boolean equalsIgnoreCase(ByteBuf b, int from, int to, byte[] lower) {
    if (to - from != lower.length) {
      return false;
    }
    for (int i = 0; i < lower.length; i++) {
      byte c = b.getByte(from + i);
      if (c >= 'A' && c <= 'Z') {
        c += 'a' - 'A';
      }
      if (c != lower[i]) {
        return false;
      }
    }
    return true;
  }

  private static boolean startsWith(ByteBuf b, int from, String prefix) {
    for (int i = 0; i < prefix.length(); i++) {
      if (b.getByte(from + i) != prefix.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  private static boolean isSpace(byte b) {
    return b == ' ' || b == '\t';
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
