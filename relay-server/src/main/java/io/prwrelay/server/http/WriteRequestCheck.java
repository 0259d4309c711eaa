package io.prwrelay.server.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.prwrelay.server.config.ConfigKeys;
import java.util.Locale;
import java.util.Set;

/**
 * Decides from the head of a write request, before its body is read, whether the relay takes it:
 * the {@code Content-Encoding} gives the body's {@link BodyEncoding}, the {@code Content-Type} must
 * be Remote Write 1.0 protobuf, a declared {@code Content-Length} must be within the body limit,
 * and a trusted tenant header is read. Pure: a request head in, {@link Accepted} or {@link
 * Rejected} out. A rejection closes the connection, since the body it leaves unread cannot be told
 * from the next request.
 */
final class WriteRequestCheck {
  /** Paths that take remote write requests (the last for cortex-tenant compatibility). */
  static final Set<String> WRITE_PATHS = Set.of("/api/v1/write", "/api/v1/push", "/push");

  /** What the check decided. */
  sealed interface Result permits Accepted, Rejected {}

  /**
   * The body may be read.
   *
   * @param incomingTenant value of the trusted tenant header, or {@code null}
   * @param contentLength declared body length, or -1 (chunked)
   */
  record Accepted(BodyEncoding encoding, String incomingTenant, long contentLength)
      implements Result {}

  /** The request is answered without reading its body. */
  record Rejected(Answer answer) implements Result {}

  private final int maxRequestBytes;
  private final String trustedTenantHeader;

  /**
   * @param maxRequestBytes largest body accepted
   * @param trustedTenantHeader header whose value names the request's tenant, or {@code null}
   */
  WriteRequestCheck(int maxRequestBytes, String trustedTenantHeader) {
    this.maxRequestBytes = maxRequestBytes;
    this.trustedTenantHeader = trustedTenantHeader;
  }

  Result check(HttpRequest head) {
    String contentEncoding = head.headers().get(HttpHeaderNames.CONTENT_ENCODING);
    if (contentEncoding == null || contentEncoding.isBlank()) {
      return reject(415, "Content-Encoding is required: snappy (or zstd)");
    }
    BodyEncoding encoding;
    switch (contentEncoding.trim().toLowerCase(Locale.ROOT)) {
      case "snappy":
        encoding = BodyEncoding.SNAPPY;
        break;
      case "zstd":
        encoding = BodyEncoding.ZSTD;
        break;
      default:
        return reject(
            415, "unsupported Content-Encoding '" + contentEncoding + "': use snappy (or zstd)");
    }
    String typeProblem = contentTypeProblem(head.headers().get(HttpHeaderNames.CONTENT_TYPE));
    if (typeProblem != null) {
      return reject(415, typeProblem);
    }
    long length = HttpUtil.getContentLength(head, -1L);
    if (length > maxRequestBytes) {
      return reject(
          413,
          "request body of "
              + length
              + " bytes exceeds "
              + ConfigKeys.SERVER_MAX_REQUEST_BYTES.name()
              + "="
              + maxRequestBytes);
    }
    String tenant = trustedTenantHeader == null ? null : head.headers().get(trustedTenantHeader);
    return new Accepted(encoding, tenant, length);
  }

  private static Rejected reject(int status, String message) {
    return new Rejected(Answer.closing(status, message));
  }

  /** Why a Content-Type cannot be relayed, or null when it is PRW 1.0 protobuf (or absent). */
  static String contentTypeProblem(String contentType) {
    if (contentType == null || contentType.isBlank()) {
      return null;
    }
    String[] parts = contentType.split(";", -1);
    String media = parts[0].trim().toLowerCase(Locale.ROOT);
    if (!media.equals("application/x-protobuf")) {
      return "unsupported Content-Type '" + contentType + "': use application/x-protobuf";
    }
    for (int i = 1; i < parts.length; i++) {
      String p = parts[i].trim();
      if (p.toLowerCase(Locale.ROOT).startsWith("proto=")) {
        String proto = p.substring(6).trim();
        if (!proto.equals("prometheus.WriteRequest")) {
          return "unsupported Content-Type '"
              + contentType
              + "': this relay accepts Remote Write 1.0 (prometheus.WriteRequest)";
        }
      }
    }
    return null;
  }
}
