package io.prwrelay.server.ingress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslHandler;
import io.prwrelay.server.metrics.RelayMetrics;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * First handler of a connection to a TLS ingress: looks at the first bytes, and for a TLS record
 * puts the current {@link SslHandler} in its own place (which gets those bytes); for anything else
 * (a sender configured with {@code http://}) answers a plain-text 400 saying that the port speaks
 * TLS, and closes, so the sender's log names the mistake instead of a handshake error.
 */
final class TlsDetector extends ByteToMessageDecoder {
  private static final String PLAINTEXT_MESSAGE = "this port speaks TLS only: send with https://\n";

  private static final byte[] PLAINTEXT_ANSWER =
      ("HTTP/1.1 400 Bad Request\r\n"
              + "Content-Type: text/plain; charset=utf-8\r\n"
              + "Content-Length: "
              + PLAINTEXT_MESSAGE.length()
              + "\r\n"
              + "Connection: close\r\n\r\n"
              + PLAINTEXT_MESSAGE)
          .getBytes(StandardCharsets.US_ASCII);

  private final IngressTls tls;
  private final RelayMetrics metrics;

  TlsDetector(IngressTls tls, RelayMetrics metrics) {
    this.tls = tls;
    this.metrics = metrics;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    // A TLS record header is 5 bytes.
    if (in.readableBytes() < 5) {
      return;
    }
    if (SslHandler.isEncrypted(in, false)) {
      SslHandler ssl = tls.newHandler(ctx.alloc());
      ssl.handshakeFuture()
          .addListener(
              f -> {
                if (!f.isSuccess()) {
                  metrics.tlsHandshakeFailed();
                }
              });
      ctx.pipeline().replace(this, "tls", ssl);
      return;
    }
    in.skipBytes(in.readableBytes());
    metrics.tlsPlaintextRejected();
    ctx.writeAndFlush(Unpooled.wrappedBuffer(PLAINTEXT_ANSWER))
        .addListener(ChannelFutureListener.CLOSE);
  }
}
