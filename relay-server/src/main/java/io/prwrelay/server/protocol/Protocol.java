package io.prwrelay.server.protocol;

import io.netty.util.AsciiString;

/**
 * The two Remote Write protocols: the message a body holds, and the headers that say so.
 *
 * <ul>
 *   <li>{@link #V1}: {@code prometheus.WriteRequest}, version header {@code 0.1.0};
 *   <li>{@link #V2}: {@code io.prometheus.write.v2.Request}, version header {@code 2.0.0}.
 * </ul>
 */
public enum Protocol {
  V1("prometheus.WriteRequest", "0.1.0", "application/x-protobuf"),
  V2(
      "io.prometheus.write.v2.Request",
      "2.0.0",
      "application/x-protobuf;proto=io.prometheus.write.v2.Request");

  private final String message;
  private final String version;
  private final AsciiString contentType;

  Protocol(String message, String version, String contentType) {
    this.message = message;
    this.version = version;
    this.contentType = AsciiString.cached(contentType);
  }

  /** The protobuf message name, as in the {@code proto} parameter of the content type. */
  public String message() {
    return message;
  }

  /** The value of {@code X-Prometheus-Remote-Write-Version}. */
  public String version() {
    return version;
  }

  /** The {@code Content-Type} a sender of this protocol uses. */
  public AsciiString contentType() {
    return contentType;
  }

  /** The protocol whose message is {@code proto}, or {@code null}. */
  public static Protocol ofMessage(String proto) {
    for (Protocol p : values()) {
      if (p.message.equals(proto)) {
        return p;
      }
    }
    return null;
  }
}
