package io.prwrelay.server.ingress;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.prwrelay.server.config.ServerConfig;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.write.Answer;
import io.prwrelay.server.write.BodyEncoding;
import io.prwrelay.server.write.WriteHead;
import java.util.Locale;
import java.util.Set;

/**
 * Decides from the head of a write request, before its body is read, whether the relay takes it:
 * the {@code Content-Encoding} gives the body's {@link BodyEncoding}, the {@code Content-Type} its
 * {@link Protocol} (Remote Write 1.0 or 2.0 protobuf), a declared {@code Content-Length} must be
 * within the body limit, and a trusted tenant header is read. Pure: a request head in, {@link
 * Accepted} or {@link Rejected} out. A rejection closes the connection, since the body it leaves
 * unread cannot be told from the next request.
 */
final class WriteRequestCheck {
  /** Paths that take remote write requests (the last for cortex-tenant compatibility). */
  static final Set<String> WRITE_PATHS = Set.of("/api/v1/write", "/api/v1/push", "/push");

  /** What the check decided. */
  sealed interface Result permits Accepted, Rejected {}

  /**
   * The body may be read.
   *
   * @param head what the write pipeline is told about the body: its encoding, the message it holds
   *     (from the {@code Content-Type}), the trusted tenant header's value (or {@code null}) and
   *     how often the sender says it sent the request before ({@code Retry-Attempt}, as Prometheus
   *     sends it on a retry; 0 without a valid one)
   * @param contentLength declared body length, or -1 (chunked)
   */
  record Accepted(WriteHead head, long contentLength) implements Result {
    BodyEncoding encoding() {
      return head.encoding();
    }

    Protocol protocol() {
      return head.protocol();
    }

    String incomingTenant() {
      return head.incomingTenant();
    }

    int senderRetries() {
      return head.senderRetries();
    }
  }

  /** The sender's retries passed on downstream at most; a larger {@code Retry-Attempt} is cut. */
  static final int MAX_SENDER_RETRIES = 1_000;

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
    String contentType = head.headers().get(HttpHeaderNames.CONTENT_TYPE);
    Protocol protocol = protocol(contentType);
    if (protocol == null) {
      return reject(415, contentTypeProblem(contentType));
    }
    long length = HttpUtil.getContentLength(head, -1L);
    if (length > maxRequestBytes) {
      Rejected tooLarge =
          reject(
              413,
              "request body of "
                  + length
                  + " bytes exceeds "
                  + ServerConfig.MAX_REQUEST_BYTES.name()
                  + "="
                  + maxRequestBytes);
      return new Rejected(tooLarge.answer().forSenderOf(protocol));
    }
    String tenant = trustedTenantHeader == null ? null : head.headers().get(trustedTenantHeader);
    return new Accepted(new WriteHead(encoding, protocol, tenant, senderRetries(head)), length);
  }

  /**
   * The sender's {@code Retry-Attempt}: a decimal count of its earlier sends of the request, cut at
   * {@link #MAX_SENDER_RETRIES}; 0 when absent or not such a number (a hint only, never refused).
   */
  static int senderRetries(HttpRequest head) {
    String value = head.headers().get("Retry-Attempt");
    if (value == null) {
      return 0;
    }
    String digits = value.trim();
    if (digits.isEmpty() || digits.length() > 9 || !digits.chars().allMatch(Character::isDigit)) {
      return 0;
    }
    return Math.min(Integer.parseInt(digits), MAX_SENDER_RETRIES);
  }

  private static Rejected reject(int status, String message) {
    return new Rejected(Answer.closing(status, message));
  }

  /**
   * The protocol of a Content-Type: {@code application/x-protobuf} alone (or no Content-Type) is
   * Remote Write 1.0, as the spec says; its {@code proto} parameter names the message otherwise.
   * {@code null} for anything else.
   */
  static Protocol protocol(String contentType) {
    if (contentType == null || contentType.isBlank()) {
      return Protocol.V1;
    }
    if (contentType.indexOf(';') < 0) {
      // The usual Content-Type, a media type alone: nothing to split.
      return contentType.trim().equalsIgnoreCase("application/x-protobuf") ? Protocol.V1 : null;
    }
    String[] parts = contentType.split(";", -1);
    if (!parts[0].trim().equalsIgnoreCase("application/x-protobuf")) {
      return null;
    }
    for (int i = 1; i < parts.length; i++) {
      String p = parts[i].trim();
      if (p.toLowerCase(Locale.ROOT).startsWith("proto=")) {
        return Protocol.ofMessage(unquote(p.substring(6).trim()));
      }
    }
    return Protocol.V1;
  }

  private static String unquote(String s) {
    return s.length() >= 2 && s.startsWith("\"") && s.endsWith("\"")
        ? s.substring(1, s.length() - 1)
        : s;
  }

  /** Why a Content-Type that {@link #protocol} did not accept cannot be relayed. */
  static String contentTypeProblem(String contentType) {
    String[] parts = contentType.split(";", -1);
    if (!parts[0].trim().equalsIgnoreCase("application/x-protobuf")) {
      return "unsupported Content-Type '" + contentType + "': use application/x-protobuf";
    }
    return "unsupported Content-Type '"
        + contentType
        + "': proto= must be "
        + Protocol.V1.message()
        + " (Remote Write 1.0) or "
        + Protocol.V2.message()
        + " (Remote Write 2.0)";
  }
}
