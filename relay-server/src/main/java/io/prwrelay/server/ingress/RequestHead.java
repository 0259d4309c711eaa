package io.prwrelay.server.ingress;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.write.Answer;
import java.util.List;

/**
 * What the {@link IngressHandler} reads from the head of any request before it knows what the
 * request is for: whether it can be served at all (400 for a head that did not decode, 431 for one
 * with more header bytes or fields than the decoder takes, 505 for an HTTP version other than 1.0
 * and 1.1, 501 for a transfer coding other than {@code chunked} alone, 417 for an expectation other
 * than {@code 100-continue}), its path, and the Remote Write version its {@code Content-Type}
 * names.
 */
final class RequestHead {
  private RequestHead() {}

  /**
   * The answer to a part of a request that did not decode, which closes the connection: {@code 431}
   * for more header (or trailer) bytes or fields than the relay takes (RFC 6585 4), naming the
   * bounds; else {@code 400} with the decoder's reason.
   *
   * @param fields "header" for the head, "trailer" for a chunked body's trailer section
   * @param part what did not decode, in the 400's message: "request" or "body"
   */
  static Answer undecoded(Throwable cause, String fields, String part) {
    if (cause instanceof TooLongHttpHeaderException tooLong) {
      return Answer.closing(
          431,
          "request "
              + fields
              + " fields too large: "
              + tooLong.getMessage()
              + " (at most "
              + HttpIngress.MAX_HEADER_FIELDS
              + " fields and "
              + HttpIngress.MAX_HEADER_BYTES
              + " bytes)");
    }
    return Answer.closing(400, "malformed HTTP " + part + ": " + cause.getMessage());
  }

  /**
   * The answer to a request whose head cannot be served, which closes the connection (counted in
   * {@code relay_other_requests_total} as {@code unsupported}, but for a head that did not decode);
   * {@code null} for a head that can be.
   */
  static Answer unservable(HttpRequest req, RelayMetrics metrics) {
    if (req.decoderResult().isFailure()) {
      return undecoded(req.decoderResult().cause(), "header", "request");
    }
    HttpVersion version = req.protocolVersion();
    if (version.majorVersion() != 1 || version.minorVersion() > 1) {
      metrics.otherRequest("unsupported", 505);
      return Answer.closing(
          505, "HTTP version " + version.text() + " is not supported: send HTTP/1.1 or HTTP/1.0");
    }
    String coding = unsupportedTransferCoding(req);
    if (coding != null) {
      // RFC 9112 6.1: a transfer coding the server does not understand is answered 501. Netty's
      // decoder reads "gzip, chunked" as chunked: the body would be read as something it is not.
      metrics.otherRequest("unsupported", 501);
      return Answer.closing(
              501, "unsupported Transfer-Encoding: " + coding + " (only chunked is supported)")
          .forSenderOf(protocol(req));
    }
    if (unsupportedExpectation(req)) {
      metrics.otherRequest("unsupported", 417);
      return Answer.closing(
              417,
              "unsupported Expect: "
                  + req.headers().get(HttpHeaderNames.EXPECT)
                  + " (only 100-continue is supported)")
          .forSenderOf(protocol(req));
    }
    return null;
  }

  /**
   * The request's transfer codings, when they are anything but {@code chunked} alone (in one or
   * several {@code Transfer-Encoding} headers); {@code null} when there are none or only that.
   */
  private static String unsupportedTransferCoding(HttpRequest req) {
    List<String> codings = req.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING);
    if (codings.isEmpty()) {
      return null;
    }
    if (codings.size() == 1
        && HttpHeaderValues.CHUNKED.toString().equalsIgnoreCase(codings.get(0).trim())) {
      return null;
    }
    return String.join(", ", codings);
  }

  /**
   * An {@code Expect} header other than {@code 100-continue} on an HTTP/1.1 request (HTTP/1.0
   * requests' expectations are ignored, as RFC 9110 says).
   */
  private static boolean unsupportedExpectation(HttpRequest req) {
    String expect = req.headers().get(HttpHeaderNames.EXPECT);
    return expect != null
        && req.protocolVersion().compareTo(HttpVersion.HTTP_1_1) >= 0
        && !HttpHeaderValues.CONTINUE.toString().equalsIgnoreCase(expect.trim());
  }

  /** The Remote Write version the request's {@code Content-Type} names. */
  static Protocol protocol(HttpRequest req) {
    return WriteRequestCheck.protocol(req.headers().get(HttpHeaderNames.CONTENT_TYPE));
  }

  /** The path of a request URI: without query, and without scheme and host in absolute form. */
  static String path(String uri) {
    int q = uri.indexOf('?');
    String p = q < 0 ? uri : uri.substring(0, q);
    if (p.startsWith("http://") || p.startsWith("https://")) {
      int slash = p.indexOf('/', p.indexOf("//") + 2);
      p = slash < 0 ? "/" : p.substring(slash);
    }
    return p;
  }
}
