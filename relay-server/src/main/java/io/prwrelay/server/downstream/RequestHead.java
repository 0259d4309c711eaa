package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.util.CharsetUtil;
import io.prwrelay.server.protocol.Protocol;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.List;

/**
 * The head of every downstream request (request line and headers), encoded to bytes once per client
 * and completed per request with the tenant and the body's length.
 *
 * <pre>
 *   POST {path, tenant in place of %7Btenant%7D} HTTP/1.1\r\n
 *   host: {host[:port]}\r\n                                      ┐
 *   content-type: {protocol's content type}\r\n                  │ constant per
 *   content-encoding: snappy\r\n                                 │ protocol
 *   X-Prometheus-Remote-Write-Version: {protocol's version}\r\n  │
 *   user-agent: prw-relay/{version}\r\n                          │
 *   {tenant header}: ─────────────────────────────────────────────┘
 *                    {tenant}\r\n
 *   content-length: {body bytes}\r\n
 *   [retry-attempt: {earlier sends}\r\n]                        only on a retry
 *   connection: keep-alive\r\n                                   ┐ constant
 *   [authorization: {credentials}\r\n]                           │
 *   \r\n ─────────────────────────────────────────────────────────┘
 * </pre>
 *
 * These are the bytes, header order and name case Netty's {@code HttpRequestEncoder} wrote for the
 * {@code DefaultFullHttpRequest} this client used to build: the request line's URI in UTF-8, header
 * names and values as US-ASCII (Netty's lower-case constant names, the configured tenant header as
 * given). Immutable; shared by every event loop.
 */
final class RequestHead {
  /** How the tenant placeholder {@code {tenant}} looks in a URL's raw path or query. */
  static final String TENANT_PLACEHOLDER = "%7Btenant%7D";

  private static final String REMOTE_WRITE_VERSION = "X-Prometheus-Remote-Write-Version";

  /** {@code POST } and the path up to the first placeholder (all of it without one). */
  private final byte[] lineStart;

  /** The path after each placeholder, up to the next one or the end. */
  private final byte[][] pathAfterTenant;

  /** From the end of the path to the tenant header's value, per {@link Protocol#ordinal()}. */
  private final byte[][] middle;

  private final byte[] lengthName = ascii("\r\ncontent-length: ");

  /**
   * Before the earlier sends of a retried batch: Mimir scales its {@code Retry-After} by them (6 s
   * × 2^(n − 1) by default), as it does for a Prometheus that retries.
   */
  private final byte[] retryAttemptName = ascii("\r\nretry-attempt: ");

  /** After the content length: {@code connection}, {@code authorization} and the blank line. */
  private final byte[] end;

  private final int constantBytes;

  /**
   * @param pathAndQuery the URL's raw path (and {@code ?query}), possibly with {@link
   *     #TENANT_PLACEHOLDER}s
   * @param hostHeader value of {@code host}
   * @param userAgent value of {@code user-agent}
   * @param tenantHeader name of the header carrying the tenant
   * @param authorization value of {@code authorization}, or {@code null} for none
   */
  RequestHead(
      String pathAndQuery,
      String hostHeader,
      String userAgent,
      String tenantHeader,
      String authorization) {
    List<String> parts = split(pathAndQuery);
    lineStart = bytes("POST " + parts.get(0), CharsetUtil.UTF_8);
    pathAfterTenant = new byte[parts.size() - 1][];
    int pathBytes = 0;
    for (int i = 1; i < parts.size(); i++) {
      pathAfterTenant[i - 1] = bytes(parts.get(i), CharsetUtil.UTF_8);
      pathBytes += pathAfterTenant[i - 1].length;
    }
    Protocol[] protocols = Protocol.values();
    middle = new byte[protocols.length][];
    int middleBytes = 0;
    for (Protocol p : protocols) {
      middle[p.ordinal()] =
          ascii(
              " HTTP/1.1\r\n"
                  + header("host", hostHeader)
                  + header("content-type", p.contentType())
                  + header("content-encoding", "snappy")
                  + header(REMOTE_WRITE_VERSION, p.version())
                  + header("user-agent", userAgent)
                  + tenantHeader
                  + ": ");
      middleBytes = Math.max(middleBytes, middle[p.ordinal()].length);
    }
    end =
        ascii(
            "\r\n"
                + header("connection", "keep-alive")
                + (authorization == null ? "" : header("authorization", authorization))
                + "\r\n");
    constantBytes =
        lineStart.length
            + pathBytes
            + middleBytes
            + lengthName.length
            + retryAttemptName.length
            + 10 // the retry attempt's digits
            + end.length;
  }

  /** True when the path names the tenant. */
  boolean tenantInPath() {
    return pathAfterTenant.length > 0;
  }

  /**
   * The head of one request, in a new buffer of {@code alloc}.
   *
   * @param tenant the tenant, safe for a header value (US-ASCII)
   * @param retryAttempt earlier sends of the batch; {@code retry-attempt} is written when above 0
   * @param contentLength bytes of the body that follows
   * @return a buffer the caller owns (and usually writes to the connection, which releases it)
   */
  ByteBuf encode(
      ByteBufAllocator alloc,
      String tenant,
      Protocol protocol,
      int retryAttempt,
      int contentLength) {
    int tenantChars = tenant.length();
    ByteBuf buf =
        alloc.directBuffer(
            constantBytes
                + (pathAfterTenant.length + 1) * ByteBufUtil.utf8MaxBytes(tenantChars)
                + 10);
    buf.writeBytes(lineStart);
    for (byte[] after : pathAfterTenant) {
      ByteBufUtil.writeUtf8(buf, tenant);
      buf.writeBytes(after);
    }
    buf.writeBytes(middle[protocol.ordinal()]);
    buf.writeCharSequence(tenant, CharsetUtil.US_ASCII);
    buf.writeBytes(lengthName);
    writeDecimal(buf, contentLength);
    if (retryAttempt > 0) {
      buf.writeBytes(retryAttemptName);
      writeDecimal(buf, retryAttempt);
    }
    buf.writeBytes(end);
    return buf;
  }

  /** Writes non-negative {@code n} in decimal ASCII digits, as {@code Integer.toString} does. */
  static void writeDecimal(ByteBuf buf, int n) {
    if (n < 0) {
      throw new IllegalArgumentException("negative length " + n);
    }
    int digits = 1;
    for (int x = n; x >= 10; x /= 10) {
      digits++;
    }
    int at = buf.writerIndex() + digits;
    buf.ensureWritable(digits);
    for (int i = 1; i <= digits; i++) {
      buf.setByte(at - i, '0' + n % 10);
      n /= 10;
    }
    buf.writerIndex(at);
  }

  private static List<String> split(String pathAndQuery) {
    List<String> parts = new ArrayList<>();
    int from = 0;
    for (int at = pathAndQuery.indexOf(TENANT_PLACEHOLDER);
        at >= 0;
        at = pathAndQuery.indexOf(TENANT_PLACEHOLDER, from)) {
      parts.add(pathAndQuery.substring(from, at));
      from = at + TENANT_PLACEHOLDER.length();
    }
    parts.add(pathAndQuery.substring(from));
    return parts;
  }

  private static String header(CharSequence name, CharSequence value) {
    return name + ": " + value + "\r\n";
  }

  /** {@code s} encoded as Netty's header encoder encodes a {@code String} (US-ASCII). */
  private static byte[] ascii(String s) {
    return bytes(s, CharsetUtil.US_ASCII);
  }

  private static byte[] bytes(String s, Charset charset) {
    ByteBuf b = Unpooled.buffer(s.length() * 3);
    try {
      b.writeCharSequence(s, charset);
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }
}
