package io.prwrelay.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.metrics.RelayMetrics;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * HTTP/1.1 ingress of one connection: routes paths, checks write requests' headers, collects the
 * body into one pooled direct buffer, hands it to {@link WriteProcessor}, and answers in request
 * order.
 *
 * <p>Requests are handled one at a time per connection. While a write request is being delivered,
 * reading from the socket pauses and any pipelined request already decoded is queued, so answers
 * always go out in request order. A body must arrive within {@code relay.server.read-timeout} (else
 * 408 and close); an idle connection is closed after {@code relay.server.idle-timeout}.
 */
final class IngressHandler extends ChannelInboundHandlerAdapter {
  static final Set<String> WRITE_PATHS = Set.of("/api/v1/write", "/api/v1/push", "/push");
  static final String METRICS = "/metrics";
  static final String HEALTHY = "/-/healthy";
  static final String READY = "/-/ready";

  private final RelayConfig config;
  private final WriteProcessor processor;
  private final RelayMetrics metrics;
  private final ServerState state;

  private final ArrayDeque<Object> queued = new ArrayDeque<>();

  /** Write request whose body is being received, or null. */
  private Incoming incoming;

  /** A write request is being processed and its answer is not yet written. */
  private boolean busy;

  /** An answer that closes the connection was written; everything after is discarded. */
  private boolean closing;

  /** Non-write request answered once its content has been consumed, or null. */
  private Skipped skipping;

  IngressHandler(
      RelayConfig config, WriteProcessor processor, RelayMetrics metrics, ServerState state) {
    this.config = config;
    this.processor = processor;
    this.metrics = metrics;
    this.state = state;
  }

  /**
   * A non-write request: its answer (null = computed when answering: metrics, health, readiness)
   * and the {@code Allow} header of a 405.
   */
  private record Skipped(HttpRequest head, String endpoint, Answer answer, String allow) {}

  /** A write request being received. */
  private static final class Incoming {
    final HttpRequest head;
    final WriteProcessor.Encoding encoding;
    final String tenant;
    final long startNanos;
    ByteBuf body;
    ScheduledFuture<?> readTimeout;

    Incoming(HttpRequest head, WriteProcessor.Encoding encoding, String tenant, long startNanos) {
      this.head = head;
      this.encoding = encoding;
      this.tenant = tenant;
      this.startNanos = startNanos;
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (closing) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (busy || !queued.isEmpty()) {
      queued.add(msg);
      return;
    }
    handle(ctx, msg);
  }

  private void handle(ChannelHandlerContext ctx, Object msg) {
    try {
      if (msg instanceof HttpRequest) {
        onRequest(ctx, (HttpRequest) msg);
      }
      if (msg instanceof HttpContent && !closing) {
        onContent(ctx, (HttpContent) msg);
      }
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  private void onRequest(ChannelHandlerContext ctx, HttpRequest req) {
    if (req.decoderResult().isFailure()) {
      answer(
          ctx,
          req,
          Answer.closing(
              400, "malformed HTTP request: " + req.decoderResult().cause().getMessage()));
      return;
    }
    String path = path(req.uri());
    HttpMethod method = req.method();
    if (WRITE_PATHS.contains(path)) {
      if (method.equals(HttpMethod.POST)) {
        startWrite(ctx, req);
      } else {
        skipping = new Skipped(req, "write", notAllowed(req, "POST"), "POST");
      }
      return;
    }
    String endpoint;
    switch (path) {
      case METRICS:
        endpoint = "metrics";
        break;
      case HEALTHY:
        endpoint = "healthy";
        break;
      case READY:
        endpoint = "ready";
        break;
      default:
        skipping = new Skipped(req, "other", Answer.of(404, "not found: " + path), null);
        return;
    }
    if (method.equals(HttpMethod.GET) || method.equals(HttpMethod.HEAD)) {
      skipping = new Skipped(req, endpoint, null, null);
    } else {
      skipping = new Skipped(req, endpoint, notAllowed(req, "GET, HEAD"), "GET, HEAD");
    }
  }

  private static Answer notAllowed(HttpRequest req, String allow) {
    return Answer.of(405, req.method() + " is not allowed here; use " + allow);
  }

  private void startWrite(ChannelHandlerContext ctx, HttpRequest req) {
    long start = System.nanoTime();
    String contentEncoding = req.headers().get(HttpHeaderNames.CONTENT_ENCODING);
    WriteProcessor.Encoding encoding;
    if (contentEncoding == null || contentEncoding.isBlank()) {
      rejectWrite(ctx, req, 415, "Content-Encoding is required: snappy (or zstd)", start);
      return;
    }
    switch (contentEncoding.trim().toLowerCase(Locale.ROOT)) {
      case "snappy":
        encoding = WriteProcessor.Encoding.SNAPPY;
        break;
      case "zstd":
        encoding = WriteProcessor.Encoding.ZSTD;
        break;
      default:
        rejectWrite(
            ctx,
            req,
            415,
            "unsupported Content-Encoding '" + contentEncoding + "': use snappy (or zstd)",
            start);
        return;
    }
    String contentType = req.headers().get(HttpHeaderNames.CONTENT_TYPE);
    String typeProblem = contentTypeProblem(contentType);
    if (typeProblem != null) {
      rejectWrite(ctx, req, 415, typeProblem, start);
      return;
    }
    long length = HttpUtil.getContentLength(req, -1L);
    if (length > config.maxRequestBytes()) {
      rejectWrite(
          ctx,
          req,
          413,
          "request body of "
              + length
              + " bytes exceeds relay.server.max-request-bytes="
              + config.maxRequestBytes(),
          start);
      return;
    }
    String tenant = null;
    if (config.trustIncomingHeader()) {
      tenant = req.headers().get(config.tenantHeader());
    }
    metrics.requestStarted();
    Incoming in = new Incoming(req, encoding, tenant, start);
    int initial = length >= 0 ? (int) length : 64 * 1024;
    in.body =
        ctx.alloc()
            .directBuffer(Math.min(initial, config.maxRequestBytes()), config.maxRequestBytes());
    in.readTimeout =
        ctx.executor()
            .schedule(
                () -> readTimedOut(ctx), config.readTimeout().toNanos(), TimeUnit.NANOSECONDS);
    incoming = in;
  }

  private void onContent(ChannelHandlerContext ctx, HttpContent content) {
    Incoming in = incoming;
    if (in == null) {
      if (content instanceof LastHttpContent && skipping != null) {
        Skipped req = skipping;
        skipping = null;
        answerSimple(ctx, req);
      }
      return;
    }
    ByteBuf chunk = content.content();
    if (chunk.readableBytes() > in.body.maxWritableBytes()) {
      abortIncoming();
      metricsFinished(413, in.startNanos);
      answer(
          ctx,
          in.head,
          Answer.closing(
              413,
              "request body exceeds relay.server.max-request-bytes=" + config.maxRequestBytes()));
      return;
    }
    in.body.writeBytes(chunk);
    if (content.decoderResult().isFailure()) {
      abortIncoming();
      metricsFinished(400, in.startNanos);
      answer(ctx, in.head, Answer.closing(400, "malformed HTTP body"));
      return;
    }
    if (content instanceof LastHttpContent) {
      incoming = null;
      in.readTimeout.cancel(false);
      busy = true;
      ctx.channel().config().setAutoRead(false);
      ByteBuf body = in.body;
      in.body = null;
      processor.process(
          ctx.channel().eventLoop(),
          ctx.alloc(),
          body,
          in.encoding,
          in.tenant,
          in.startNanos,
          answer -> {
            metricsFinished(answer.status(), in.startNanos);
            answer(ctx, in.head, answer);
            busy = false;
            drainQueued(ctx);
          });
    }
  }

  private void metricsFinished(int status, long startNanos) {
    metrics.requestFinished(status, System.nanoTime() - startNanos);
  }

  private void drainQueued(ChannelHandlerContext ctx) {
    while (!busy && !queued.isEmpty()) {
      Object msg = queued.poll();
      if (closing) {
        ReferenceCountUtil.release(msg);
      } else {
        handle(ctx, msg);
      }
    }
    if (!busy && !closing && ctx.channel().isActive()) {
      ctx.channel().config().setAutoRead(true);
      ctx.read();
    }
  }

  private void readTimedOut(ChannelHandlerContext ctx) {
    Incoming in = incoming;
    if (in == null) {
      return;
    }
    abortIncoming();
    metricsFinished(408, in.startNanos);
    answer(
        ctx,
        in.head,
        Answer.closing(
            408,
            "request body not received within relay.server.read-timeout=" + config.readTimeout()));
  }

  private void abortIncoming() {
    Incoming in = incoming;
    incoming = null;
    if (in != null) {
      in.readTimeout.cancel(false);
      if (in.body != null) {
        in.body.release();
        in.body = null;
      }
    }
  }

  private void rejectWrite(
      ChannelHandlerContext ctx, HttpRequest req, int status, String message, long start) {
    metrics.requestStarted();
    metricsFinished(status, start);
    // The body is not read: close after answering so it cannot be mistaken for the next request.
    answer(ctx, req, Answer.closing(status, message));
  }

  private void answerSimple(ChannelHandlerContext ctx, Skipped skipped) {
    HttpRequest req = skipped.head();
    Answer a = skipped.answer();
    if (a == null) {
      switch (skipped.endpoint()) {
        case "metrics":
          a = Answer.of(200, metrics.scrape());
          break;
        case "healthy":
          a = Answer.of(200, "OK");
          break;
        default:
          a =
              state.ready()
                  ? Answer.of(200, "ready")
                  : Answer.of(503, "not ready: " + state.reason());
      }
    }
    metrics.otherRequest(skipped.endpoint(), a.status());
    FullHttpResponse r = response(a);
    if (skipped.allow() != null) {
      r.headers().set(HttpHeaderNames.ALLOW, skipped.allow());
    }
    if (skipped.endpoint().equals("metrics") && a.status() == 200) {
      r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
    }
    if (req.method().equals(HttpMethod.HEAD)) {
      r.content().clear();
    }
    write(ctx, req, r, a.close());
  }

  private void answer(ChannelHandlerContext ctx, HttpRequest req, Answer a) {
    write(ctx, req, response(a), a.close());
  }

  private static FullHttpResponse response(Answer a) {
    HttpResponseStatus status = HttpResponseStatus.valueOf(a.status());
    ByteBuf content =
        a.status() == 204 || a.message().isEmpty()
            ? Unpooled.EMPTY_BUFFER
            : Unpooled.copiedBuffer(a.message() + "\n", StandardCharsets.UTF_8);
    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
    if (content.isReadable()) {
      r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
    }
    if (a.status() != 204) {
      r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
    }
    if (a.retryAfterSeconds() >= 0) {
      r.headers().set(HttpHeaderNames.RETRY_AFTER, Long.toString(a.retryAfterSeconds()));
    }
    return r;
  }

  private void write(
      ChannelHandlerContext ctx, HttpRequest req, FullHttpResponse r, boolean close) {
    boolean keepAlive = !close && HttpUtil.isKeepAlive(req) && !state.isDraining();
    if (keepAlive) {
      if (req.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
        r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
      }
      ctx.writeAndFlush(r);
    } else {
      closing = true;
      r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
    }
  }

  static String path(String uri) {
    int q = uri.indexOf('?');
    String p = q < 0 ? uri : uri.substring(0, q);
    if (p.startsWith("http://") || p.startsWith("https://")) {
      int slash = p.indexOf('/', p.indexOf("//") + 2);
      p = slash < 0 ? "/" : p.substring(slash);
    }
    return p;
  }

  /** Why a Content-Type cannot be relayed, or null when it is PRW 1.0 protobuf (or absent). */
  static String contentTypeProblem(String contentType) {
    if (contentType == null || contentType.isBlank()) {
      return null;
    }
    String[] parts = contentType.split(";");
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

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent) {
      if (!busy && incoming == null) {
        ctx.close();
      }
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    Incoming in = incoming;
    abortIncoming();
    if (in != null) {
      metrics.requestFinished(499, System.nanoTime() - in.startNanos);
    }
    while (!queued.isEmpty()) {
      ReferenceCountUtil.release(queued.poll());
    }
    super.channelInactive(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
