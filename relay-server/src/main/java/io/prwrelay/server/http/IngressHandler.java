package io.prwrelay.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
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
import io.prwrelay.server.config.ConfigKeys;
import io.prwrelay.server.config.ServerConfig;
import io.prwrelay.server.downstream.Protocol;
import io.prwrelay.server.downstream.WrittenCounts;
import io.prwrelay.server.metrics.RelayMetrics;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The HTTP/1.1 ingress of one connection, as a state machine: takes requests one at a time, checks
 * a write request's credentials ({@link InboundAuth}, 401) and head ({@link WriteRequestCheck}),
 * admits its declared size against the {@link InflightBudget} (503 when over), answers {@code
 * Expect: 100-continue} only then, collects its body into one pooled direct buffer within the size
 * cap and the read timeout, hands it to {@link WriteProcessor}, lets {@link AdminHandler} answer
 * everything else, and writes every answer in request order. An answer given before the body is
 * read closes the connection through {@link LingeringClose}.
 *
 * <p>The budget reservation of a write request is released exactly once: when it is answered, or
 * when its body is abandoned (413, 400, 408, the connection closing mid-body).
 *
 * <p>While a write request is being delivered, reading from the socket pauses and any pipelined
 * request already decoded is queued. A body must arrive within {@code relay.server.read-timeout}
 * (else 408 and close); an idle connection is closed after {@code relay.server.idle-timeout}. Time
 * comes from the channel's event loop ticker.
 */
final class IngressHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.server");

  private final ServerConfig config;
  private final WriteRequestCheck check;
  private final WriteProcessor processor;
  private final AdminHandler admin;
  private final RelayMetrics metrics;
  private final ServerState state;
  private final InflightBudget budget;
  private final InboundAuth auth;

  private final ArrayDeque<Object> queued = new ArrayDeque<>();

  /** Write request whose body is being received, or null. */
  private Incoming incoming;

  /** A write request is being processed and its answer is not yet written. */
  private boolean busy;

  /** An answer that closes the connection was written; everything after is discarded. */
  private boolean closing;

  /** Non-write request answered once its content has been consumed, or null. */
  private HttpRequest skipping;

  /** Path of {@link #skipping}. */
  private String skippingPath;

  /**
   * @param ingress the server-wide pieces this connection shares with the others
   */
  IngressHandler(HttpIngress ingress) {
    this.config = ingress.server;
    this.check = ingress.check;
    this.processor = ingress.processor;
    this.admin = ingress.admin;
    this.metrics = ingress.metrics;
    this.state = ingress.state;
    this.budget = ingress.budget;
    this.auth = ingress.auth;
  }

  /** A write request being received. */
  private static final class Incoming {
    final HttpRequest head;
    final WriteRequestCheck.Accepted accepted;
    final long startNanos;
    final InflightBudget.Reservation reservation;
    final TenantAllowList allowed;
    ByteBuf body;
    ScheduledFuture<?> readTimeout;

    Incoming(
        HttpRequest head,
        WriteRequestCheck.Accepted accepted,
        long startNanos,
        InflightBudget.Reservation reservation,
        TenantAllowList allowed) {
      this.head = head;
      this.accepted = accepted;
      this.startNanos = startNanos;
      this.reservation = reservation;
      this.allowed = allowed;
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
    if (WriteRequestCheck.WRITE_PATHS.contains(path) && req.method().equals(HttpMethod.POST)) {
      startWrite(ctx, req);
    } else if (auth.protectsMetrics()
        && path.equals(AdminEndpoint.METRICS.path())
        && auth.authenticate(req.headers()) == null) {
      metrics.otherRequest(AdminEndpoint.METRICS.tag(), 401);
      write(ctx, req, auth.unauthorized(), true);
    } else {
      continueIfExpected(ctx, req);
      skipping = req;
      skippingPath = path;
    }
  }

  /** Answers {@code Expect: 100-continue}: the sender may send the body now. */
  private static void continueIfExpected(ChannelHandlerContext ctx, HttpRequest req) {
    if (HttpUtil.is100ContinueExpected(req)) {
      ctx.writeAndFlush(
          new DefaultFullHttpResponse(
              HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE, Unpooled.EMPTY_BUFFER));
    }
  }

  private void startWrite(ChannelHandlerContext ctx, HttpRequest req) {
    long start = now(ctx);
    metrics.requestStarted();
    TenantAllowList allowed = auth.authenticate(req.headers());
    if (allowed == null) {
      metricsFinished(ctx, 401, start);
      FullHttpResponse unauthorized = auth.unauthorized();
      if (WriteRequestCheck.protocol(req.headers().get(HttpHeaderNames.CONTENT_TYPE))
          == Protocol.V2) {
        // A PRW 2.0 sender learns from every answer what was written: nothing.
        WrittenCounts.ZERO.setOn(unauthorized.headers());
      }
      write(ctx, req, unauthorized, true);
      return;
    }
    WriteRequestCheck.Result result = check.check(req);
    if (result instanceof WriteRequestCheck.Rejected rejected) {
      metricsFinished(ctx, rejected.answer().status(), start);
      answer(ctx, req, rejected.answer());
      return;
    }
    WriteRequestCheck.Accepted accepted = (WriteRequestCheck.Accepted) result;
    int max = config.maxRequestBytes();
    long length = accepted.contentLength();
    // A chunked body does not declare its size: it is admitted at the largest it may become.
    InflightBudget.Admission admission =
        budget.admit(clientAddress(ctx), length >= 0 ? length : max);
    if (admission.reservation() == null) {
      metrics.inflightRejected(admission.refusal().tag);
      metricsFinished(ctx, 503, start);
      answer(ctx, req, overBudget(admission.refusal()).forSenderOf(accepted.protocol()));
      return;
    }
    continueIfExpected(ctx, req);
    Incoming in = new Incoming(req, accepted, start, admission.reservation(), allowed);
    int initial = length >= 0 ? (int) length : 64 * 1024;
    in.body = ctx.alloc().directBuffer(Math.min(initial, max), max);
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
        HttpRequest req = skipping;
        skipping = null;
        write(ctx, req, admin.respond(req, skippingPath), false);
      }
      return;
    }
    ByteBuf chunk = content.content();
    if (chunk.readableBytes() > in.body.maxWritableBytes()) {
      abortAndAnswer(
          ctx,
          in,
          Answer.closing(
              413,
              "request body exceeds "
                  + ConfigKeys.SERVER_MAX_REQUEST_BYTES.setTo(config.maxRequestBytes())));
      return;
    }
    in.body.writeBytes(chunk);
    if (content.decoderResult().isFailure()) {
      abortAndAnswer(ctx, in, Answer.closing(400, "malformed HTTP body"));
      return;
    }
    if (content instanceof LastHttpContent) {
      incoming = null;
      in.readTimeout.cancel(false);
      busy = true;
      ctx.channel().config().setAutoRead(false);
      ByteBuf body = in.body;
      in.body = null;
      Consumer<Answer> done =
          answer -> {
            in.reservation.release();
            metricsFinished(ctx, answer.status(), in.startNanos);
            answer(ctx, in.head, answer);
            busy = false;
            drainQueued(ctx);
          };
      processor.process(
          ctx.channel().eventLoop(),
          ctx.alloc(),
          body,
          in.accepted.encoding(),
          in.accepted.protocol(),
          in.accepted.incomingTenant(),
          in.allowed,
          in.startNanos,
          done);
    }
  }

  /** Seconds a sender refused by the memory budget is asked to wait. */
  static final long BUDGET_RETRY_AFTER_SECONDS = 5;

  private Answer overBudget(InflightBudget.Refusal refusal) {
    String what =
        refusal == InflightBudget.Refusal.TOTAL
            ? "the relay's request memory ("
                + ConfigKeys.SERVER_MAX_INFLIGHT_BYTES.setTo(budget.limit())
                + ")"
            : "this client's share of the relay's request memory ("
                + ConfigKeys.SERVER_MAX_INFLIGHT_BYTES_PER_CLIENT.setTo(budget.perClientLimit())
                + ")";
    return new Answer(503, what + " is in use; retry later", BUDGET_RETRY_AFTER_SECONDS, true);
  }

  private static InetAddress clientAddress(ChannelHandlerContext ctx) {
    return ctx.channel().remoteAddress() instanceof InetSocketAddress a ? a.getAddress() : null;
  }

  private static long now(ChannelHandlerContext ctx) {
    return ctx.executor().ticker().nanoTime();
  }

  private void metricsFinished(ChannelHandlerContext ctx, int status, long startNanos) {
    metrics.requestFinished(status, now(ctx) - startNanos);
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
    abortAndAnswer(
        ctx,
        in,
        Answer.closing(
            408,
            "request body not received within "
                + ConfigKeys.SERVER_READ_TIMEOUT.setTo(config.readTimeout())));
  }

  private void abortIncoming() {
    Incoming in = incoming;
    incoming = null;
    if (in != null) {
      in.readTimeout.cancel(false);
      in.reservation.release();
      if (in.body != null) {
        in.body.release();
        in.body = null;
      }
    }
  }

  /**
   * Stops receiving {@code in} (its body and budget released) and answers it with {@code a}: its
   * body was not processed, so a Remote Write 2.0 sender learns that nothing was written.
   */
  private void abortAndAnswer(ChannelHandlerContext ctx, Incoming in, Answer a) {
    abortIncoming();
    metricsFinished(ctx, a.status(), in.startNanos);
    answer(ctx, in.head, a.forSenderOf(in.accepted.protocol()));
  }

  private void answer(ChannelHandlerContext ctx, HttpRequest req, Answer a) {
    write(ctx, req, a.toResponse(), a.close());
  }

  /**
   * Writes {@code r}; keeps the connection open only when the request, the answer and the state
   * allow.
   */
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
      ctx.writeAndFlush(r).addListener(f -> LingeringClose.begin(ctx, this));
    }
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
      metricsFinished(ctx, 499, in.startNanos);
    }
    while (!queued.isEmpty()) {
      ReferenceCountUtil.release(queued.poll());
    }
    super.channelInactive(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // A socket error (a reset, a broken pipe) ends the connection quietly; anything else thrown
    // while handling a request is a bug of the relay: logged with its stack trace and counted.
    if (!(cause instanceof IOException)) {
      metrics.internalError("connection");
      LOG.log(Level.WARNING, "connection closed after an error inside the relay", cause);
    }
    ctx.close();
  }
}
