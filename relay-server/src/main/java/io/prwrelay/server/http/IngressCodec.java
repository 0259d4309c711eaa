package io.prwrelay.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Locale;

/**
 * The HTTP/1.1 codec of an ingress connection: Netty's request decoder and response encoder, joined
 * as Netty's {@code HttpServerCodec} joins them (with no bound on requests decoded ahead of their
 * answers: {@link IngressHandler} keeps its own), so that the decoder can be given one thing
 * Netty's codec does not take: the header names senders send, as shared constants. Netty's decoder
 * makes a new {@code AsciiString} for every header name but five, and then only in their canonical
 * case; a Prometheus request's names, or the same in lower case (as many clients send them), are
 * looked up in a small table and the decoder's copy is made only for the others. Everything else,
 * every limit and check included, is Netty's decoder.
 *
 * <p>As Netty's codec does, the encoder learns from the decoder which answer is to a {@code HEAD}
 * request (no body) or to {@code CONNECT}, and closes the connection after the answer to a request
 * that had both {@code Transfer-Encoding: chunked} and {@code Content-Length}.
 */
final class IngressCodec
    extends CombinedChannelDuplexHandler<HttpRequestDecoder, HttpResponseEncoder> {
  private static final byte HEAD = 1;
  private static final byte CONNECT = 2;
  private static final byte OTHER = 3;

  /** Methods of requests decoded and not yet answered, two bits each, the oldest lowest. */
  private long methods;

  private int methodCount;

  /** Methods past the 32 {@link #methods} holds, in order; null when none. */
  private ArrayDeque<Byte> moreMethods;

  /** The next answer ends the connection. */
  private boolean closeAfterAnswer;

  /**
   * @param config the decoder's limits and header maps
   */
  IngressCodec(HttpDecoderConfig config) {
    init(new Decoder(config), new Encoder());
  }

  private void enqueue(HttpMethod method) {
    byte flag =
        HttpMethod.HEAD.equals(method) ? HEAD : HttpMethod.CONNECT.equals(method) ? CONNECT : OTHER;
    if (moreMethods != null) {
      moreMethods.add(flag);
    } else if (methodCount < Long.SIZE / 2) {
      methods |= (long) flag << (methodCount << 1);
      methodCount++;
    } else {
      moreMethods = new ArrayDeque<>(4);
      moreMethods.add(flag);
    }
  }

  private byte poll() {
    if (methodCount != 0) {
      byte flag = (byte) (methods & 0x3L);
      methods >>>= 2;
      methodCount--;
      return flag;
    }
    if (moreMethods != null) {
      Byte flag = moreMethods.poll();
      if (moreMethods.isEmpty()) {
        moreMethods = null;
      }
      return flag != null ? flag : OTHER;
    }
    return OTHER;
  }

  /** Header names senders send, canonical and in lower case: one shared copy of each. */
  private static final AsciiString[] KNOWN_NAMES = knownNames();

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

  /** The known name whose bytes are exactly {@code sb[start, start + length)}, or null. */
  static AsciiString knownName(byte[] sb, int start, int length) {
    for (AsciiString name : KNOWN_NAMES) {
      if (name.length() == length && sameBytes(name, sb, start)) {
        return name;
      }
    }
    return null;
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

  private final class Decoder extends HttpRequestDecoder {
    Decoder(HttpDecoderConfig config) {
      super(config);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out)
        throws Exception {
      int before = out.size();
      super.decode(ctx, buffer, out);
      for (int i = before; i < out.size(); i++) {
        if (out.get(i) instanceof HttpRequest req) {
          enqueue(req.method());
        }
      }
    }

    @Override
    protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
      super.handleTransferEncodingChunkedWithContentLength(message);
      closeAfterAnswer = true;
    }

    @Override
    protected AsciiString splitHeaderName(byte[] sb, int start, int length) {
      AsciiString known = knownName(sb, start, length);
      return known != null ? known : super.splitHeaderName(sb, start, length);
    }
  }

  private final class Encoder extends HttpResponseEncoder {
    private byte method;

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise)
        throws Exception {
      if (closeAfterAnswer && msg instanceof LastHttpContent) {
        closeAfterAnswer = false;
        promise = promise.unvoid().addListener(ChannelFutureListener.CLOSE);
      }
      super.write(ctx, msg, promise);
    }

    @Override
    protected void sanitizeHeadersBeforeEncode(HttpResponse msg, boolean isAlwaysEmpty) {
      if (!isAlwaysEmpty
          && method == CONNECT
          && msg.status().codeClass() == HttpStatusClass.SUCCESS) {
        msg.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
        return;
      }
      super.sanitizeHeadersBeforeEncode(msg, isAlwaysEmpty);
    }

    @Override
    protected boolean isContentAlwaysEmpty(HttpResponse msg) {
      if (msg.status().codeClass() == HttpStatusClass.INFORMATIONAL) {
        return super.isContentAlwaysEmpty(msg); // a 100 Continue answers no request yet
      }
      method = poll();
      return method == HEAD || super.isContentAlwaysEmpty(msg);
    }
  }
}
