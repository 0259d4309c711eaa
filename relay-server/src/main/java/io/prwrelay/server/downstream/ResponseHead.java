package io.prwrelay.server.downstream;

import static io.prwrelay.server.downstream.LineReader.isSpace;

import io.netty.buffer.ByteBuf;
import io.prwrelay.server.protocol.WrittenCounts;
import java.nio.charset.StandardCharsets;

/**
 * The head of the response {@link ResponseParser} is reading: its status line and the values of the
 * headers the downstream client needs, read in place from each line. One instance per parser,
 * reused for every response through {@link #reset()}, so reading a head allocates nothing but the
 * values it keeps: {@code Retry-After}'s string and, when asked, the {@link WrittenCounts}.
 *
 * <p>Headers read, matched without regard to case; every other header is skipped:
 *
 * <ul>
 *   <li>{@code Content-Length}: decimal digits; repeated, or as a comma-separated list, only with
 *       the same value. -1 when absent.
 *   <li>{@code Transfer-Encoding}: noted as present; chunked when its last coding is {@code
 *       chunked}.
 *   <li>{@code Connection}: the {@code close} and {@code keep-alive} tokens, over every such
 *       header.
 *   <li>{@code Retry-After}: the value as sent, trimmed.
 *   <li>The three Remote Write 2.0 {@code *-Written} counts, read as {@link WrittenCounts#of} reads
 *       one: -1 when absent or not a count.
 * </ul>
 *
 * <p>Invariants: after {@link #reset()} every field is as for a head with no header; {@code status}
 * is 0 until a status line is read, then 100 to 999. A folded continuation line is skipped unless
 * it follows one of the headers read here, which is malformed (its value would be cut short).
 */
final class ResponseHead {
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

  private int status;
  private boolean http10;
  private long contentLength;
  private boolean transferEncoding;
  private boolean chunked;
  private boolean connectionClose;
  private boolean connectionKeepAlive;

  /** Whether the last header line was one read here: a folded line after it is malformed. */
  private boolean lastHeaderRead;

  private String retryAfter;
  private long samplesWritten;
  private long histogramsWritten;
  private long exemplarsWritten;

  ResponseHead() {
    reset();
  }

  /** Forgets the head read, for the next response. */
  void reset() {
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
  }

  int status() {
    return status;
  }

  /** The {@code Content-Length}, or -1 when there was none. */
  long contentLength() {
    return contentLength;
  }

  /** Whether there was a {@code Transfer-Encoding}, chunked or not. */
  boolean transferEncoding() {
    return transferEncoding;
  }

  /** Whether the {@code Transfer-Encoding}'s last coding is {@code chunked}. */
  boolean chunked() {
    return chunked;
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

  /** The connection ends with this response whatever its headers say. */
  void closeConnection() {
    connectionClose = true;
  }

  /**
   * Whether the connection can carry another request after this response: HTTP/1.1 unless {@code
   * Connection: close}, HTTP/1.0 only with {@code Connection: keep-alive}; never with both {@code
   * Transfer-Encoding} and {@code Content-Length}, or after {@link #closeConnection()}.
   */
  boolean keepAlive() {
    if (connectionClose || (transferEncoding && contentLength >= 0)) {
      return false;
    }
    return http10 ? connectionKeepAlive : true;
  }

  /**
   * Reads the status line {@code HTTP/1.x SP 3DIGIT [SP reason]} in {@code [from, to)}.
   *
   * @param line borrowed
   */
  void statusLine(ByteBuf line, int from, int to) throws ResponseParser.Malformed {
    int n = to - from;
    if (n < 12
        || !startsWith(line, from, "HTTP/1.")
        || line.getByte(from + 8) != ' '
        || (n > 12 && line.getByte(from + 12) != ' ')) {
      throw new ResponseParser.Malformed("malformed response: bad status line");
    }
    byte minor = line.getByte(from + 7);
    if (minor != '0' && minor != '1') {
      throw new ResponseParser.Malformed("malformed response: unsupported HTTP version");
    }
    http10 = minor == '0';
    int code = 0;
    for (int i = from + 9; i < from + 12; i++) {
      byte b = line.getByte(i);
      if (b < '0' || b > '9') {
        throw new ResponseParser.Malformed("malformed response: bad status code");
      }
      code = code * 10 + (b - '0');
    }
    if (code < 100) {
      throw new ResponseParser.Malformed("malformed response: bad status code");
    }
    status = code;
  }

  /**
   * Reads one header line in {@code [start, end)}, not empty: its name matched against {@link
   * #NAMES}, the value of a match read.
   *
   * @param line borrowed
   */
  void header(ByteBuf line, int start, int end) throws ResponseParser.Malformed {
    byte first = line.getByte(start);
    if (isSpace(first)) {
      // obs-fold: continues the header before it
      if (lastHeaderRead) {
        throw new ResponseParser.Malformed("malformed response: folded header line");
      }
      return;
    }
    int colon = line.indexOf(start, end, (byte) ':');
    if (colon <= start) {
      throw new ResponseParser.Malformed("malformed response: header line without a name");
    }
    int nameEnd = colon;
    while (nameEnd > start && isSpace(line.getByte(nameEnd - 1))) {
      nameEnd--;
    }
    int which = -1;
    for (int i = 0; i < NAMES.length; i++) {
      if (equalsIgnoreCase(line, start, nameEnd, NAMES[i])) {
        which = i;
        break;
      }
    }
    lastHeaderRead = which >= 0;
    if (which < 0) {
      return;
    }
    int from = colon + 1;
    int to = end;
    while (from < to && isSpace(line.getByte(from))) {
      from++;
    }
    while (to > from && isSpace(line.getByte(to - 1))) {
      to--;
    }
    switch (which) {
      case 0 -> contentLength(line, from, to);
      case 1 -> {
        transferEncoding = true;
        chunked = lastTokenIs(line, from, to, CHUNKED);
      }
      case 2 -> {
        connectionClose |= hasToken(line, from, to, CLOSE);
        connectionKeepAlive |= hasToken(line, from, to, KEEP_ALIVE);
      }
      case 3 -> retryAfter = line.toString(from, to - from, StandardCharsets.ISO_8859_1);
      case 4 -> samplesWritten = count(line, from, to);
      case 5 -> histogramsWritten = count(line, from, to);
      default -> exemplarsWritten = count(line, from, to);
    }
  }

  /** {@code Content-Length}: digits; repeated (or as a list) only with the same value. */
  private void contentLength(ByteBuf line, int from, int to) throws ResponseParser.Malformed {
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
        long v = digits(line, start, end);
        if (v < 0 || (value >= 0 && v != value) || (contentLength >= 0 && v != contentLength)) {
          throw new ResponseParser.Malformed("malformed response: bad Content-Length");
        }
        value = v;
        from = i + 1;
      }
    }
    contentLength = value;
  }

  /** The decimal number in {@code [from, to)}, or -1 when it is empty, not digits, or too long. */
  private static long digits(ByteBuf line, int from, int to) {
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
  private static long count(ByteBuf line, int from, int to) {
    boolean plus = from < to && line.getByte(from) == '+';
    return digits(line, plus ? from + 1 : from, to);
  }

  /** Whether the comma-separated list in {@code [from, to)} ends with {@code token}. */
  private static boolean lastTokenIs(ByteBuf line, int from, int to, byte[] token) {
    int comma = to;
    while (comma > from && line.getByte(comma - 1) != ',') {
      comma--;
    }
    return trimmedEquals(line, comma, to, token);
  }

  /** Whether the comma-separated list in {@code [from, to)} has {@code token}. */
  private static boolean hasToken(ByteBuf line, int from, int to, byte[] token) {
    int start = from;
    for (int i = from; i <= to; i++) {
      if (i == to || line.getByte(i) == ',') {
        if (trimmedEquals(line, start, i, token)) {
          return true;
        }
        start = i + 1;
      }
    }
    return false;
  }

  private static boolean trimmedEquals(ByteBuf line, int from, int to, byte[] token) {
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

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
