package io.prwrelay.server.ingress;

import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.util.AsciiString;
import java.util.Locale;

/**
 * Netty's HTTP/1.1 request decoder with the header names senders send as shared constants. Netty's
 * decoder makes a new {@code AsciiString} for every header name but five, and those only in their
 * canonical case; a Prometheus request's names, or the same in lower case (as many clients send
 * them), are looked up here in a small table and Netty's copy is made only for the others (about
 * 500 B less per request under load, BENCHMARKS.md). Everything else, every limit and check
 * included, is Netty's decoder; this is the one hook it offers for names ({@code splitHeaderName}).
 *
 * <p>Paired with Netty's plain response encoder, not its {@code HttpServerCodec} (which takes no
 * decoder of ours): what that codec adds is not needed here. The {@link AnswerWriter} knows which
 * answer is to a {@code HEAD} request; the relay answers {@code CONNECT} 404 or 405, never 2xx; and
 * Netty's decoder refuses a request framed both by chunks and by length (400), so no answer has to
 * close its connection behind its back.
 */
final class IngressDecoder extends HttpRequestDecoder {
  /** Header names senders send, canonical and in lower case: one shared copy of each. */
  private static final AsciiString[] KNOWN_NAMES = knownNames();

  /**
   * @param config the decoder's limits and header maps
   */
  IngressDecoder(HttpDecoderConfig config) {
    super(config);
  }

  private static AsciiString[] knownNames() {
    String[] names = {
      "Host",
      "User-Agent",
      "Content-Type",
      "Content-Length",
      "Content-Encoding",
      "X-Prometheus-Remote-Write-Version",
      "Accept-Encoding",
      "Authorization",
      "Connection",
      "Transfer-Encoding",
      "Expect",
      "Accept",
      "X-Scope-OrgID",
      "X-Scope-Orgid",
    };
    AsciiString[] known = new AsciiString[2 * names.length];
    for (int i = 0; i < names.length; i++) {
      known[2 * i] = AsciiString.cached(names[i]);
      known[2 * i + 1] = AsciiString.cached(names[i].toLowerCase(Locale.ROOT));
    }
    return known;
  }

  @Override
  protected AsciiString splitHeaderName(byte[] sb, int start, int length) {
    for (AsciiString name : KNOWN_NAMES) {
      if (name.length() == length && sameBytes(name, sb, start)) {
        return name;
      }
    }
    return super.splitHeaderName(sb, start, length);
  }

  private static boolean sameBytes(AsciiString name, byte[] sb, int start) {
    byte[] bytes = name.array();
    int offset = name.arrayOffset();
    for (int i = name.length() - 1; i >= 0; i--) {
      if (bytes[offset + i] != sb[start + i]) {
        return false;
      }
    }
    return true;
  }
}
