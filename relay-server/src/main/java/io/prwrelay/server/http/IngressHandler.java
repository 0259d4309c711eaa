package io.prwrelay.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
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

  /** At most one stack trace a minute for errors that end a connection; all are counted. */
  private static final LogLimiter ERROR_LOG = new LogLimiter(TimeUnit.MINUTES.toNanos(1));

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
   * The last answer filled the connection's outbound buffer past its high water mark: nothing more
   * is read or answered until the client has read enough of it (or {@link #notReadingTimeout}
   * closes the connection).
   */
  private boolean blocked;

  /** Closes a connection whose client has not read its answers within the read timeout. */
  private ScheduledFuture<?> notReadingTimeout;

  /** Requests in {@link #queued}, each waiting for the answers before it. */
  private int pipelined;

  /**
   * More than {@link #MAX_PIPELINED} requests arrived ahead of their answers: the one past the
   * bound will be answered 503 and the connection closed; everything after it is discarded unread.
   */
  private boolean overflowed;

  /** The client closed its side: the connection closes once every request read is answered. */
  private boolean inputShut;

  /** The last answer written, for closing once it is out. */
  private ChannelFuture lastWrite;

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

  /**
   * Requests one connection may send ahead of their answers (HTTP/1.1 pipelining); the one past it
   * is answered 503 and the connection closed, without reading what follows.
   */
  static final int MAX_PIPELINED = 16;

  /** Answer to the request past {@link #MAX_PIPELINED}, waiting for its turn in {@link #queued}. */
  private record Overflow(HttpRequest head) {}

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (closing) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (busy || blocked || !queued.isEmpty()) {
      enqueue(msg);
      return;
    }
    handle(ctx, msg);
  }

  /** Keeps a message until the answers before it are written, within {@link #MAX_PIPELINED}. */
  private void enqueue(Object msg) {
    if (overflowed) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (msg instanceof HttpRequest req) {
      if (pipelined == MAX_PIPELINED) {
        overflowed = true;
        ReferenceCountUtil.release(msg);
        queued.add(new Overflow(req));
        return;
      }
      pipelined++;
    }
    queued.add(msg);
  }

  private void handle(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof Overflow o) {
      metrics.otherRequest("pipelined", 503);
      answer(
          ctx,
          o.head(),
          new Answer(
                  503,
                  "more than "
                      + MAX_PIPELINED
                      + " requests sent ahead of their answers on one connection; this one and"
                      + " those after it were not read: send them again",
                  1,
                  true)
              .forSenderOf(protocolOf(o.head())));
      return;
    }
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
    HttpVersion version = req.protocolVersion();
    if (version.majorVersion() != 1 || version.minorVersion() > 1) {
      metrics.otherRequest("unsupported", 505);
      answer(
          ctx,
          req,
          Answer.closing(
              505,
              "HTTP version " + version.text() + " is not supported: send HTTP/1.1 or HTTP/1.0"));
      return;
    }
    if (unsupportedExpectation(req)) {
      metrics.otherRequest("unsupported", 417);
      answer(
          ctx,
          req,
          Answer.closing(
                  417,
                  "unsupported Expect: "
                      + req.headers().get(HttpHeaderNames.EXPECT)
                      + " (only 100-continue is supported)")
              .forSenderOf(protocolOf(req)));
      return;
    }
    String path = path(req.uri());
    if (WriteRequestCheck.WRITE_PATHS.contains(path) && req.method().equals(HttpMethod.POST)) {
      startWrite(ctx, req);
    } else if (auth.protectsMetrics()
        && AdminEndpoint.at(path) != null
        && AdminEndpoint.at(path).protectedLikeMetrics()
        && auth.authenticate(req.headers()) == null) {
      metrics.otherRequest(AdminEndpoint.at(path).tag(), 401);
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
    // A chunked body does not declare its size: it is admitted at its first buffer's size and its
    // reservation grows with the buffer as the chunks arrive (onContent).
    int initial = length >= 0 ? (int) length : Math.min(CHUNKED_INITIAL_BYTES, max);
    InflightBudget.Admission admission = budget.admit(clientAddress(ctx), initial);
    if (admission.reservation() == null) {
      metrics.inflightRejected(admission.refusal().tag);
      metricsFinished(ctx, 503, start);
      answer(ctx, req, budget.refused(admission.refusal(), true).forSenderOf(accepted.protocol()));
      return;
    }
    ByteBuf body;
    try {
      body = ctx.alloc().directBuffer(initial, max);
    } catch (OutOfMemoryError e) {
      // Direct memory is smaller than the budget says: the request is refused as if the budget
      // were full, and its reservation returned.
      admission.reservation().release();
      metrics.internalError("memory");
      metricsFinished(ctx, 503, start);
      answer(ctx, req, budget.refused(InflightBudget.Refusal.TOTAL, true));
      return;
    }
    continueIfExpected(ctx, req);
    Incoming in = new Incoming(req, accepted, start, admission.reservation(), allowed);
    in.body = body;
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
    if (chunk.readableBytes() > in.body.writableBytes()) {
      // Only a chunked body grows: its buffer's next capacity is reserved before it is allocated.
      int capacity =
          ctx.alloc()
              .calculateNewCapacity(
                  in.body.writerIndex() + chunk.readableBytes(), in.body.maxCapacity());
      InflightBudget.Refusal refusal = in.reservation.growTo(capacity);
      if (refusal != null) {
        metrics.inflightRejected(refusal.tag);
        abortAndAnswer(ctx, in, budget.refused(refusal, true));
        return;
      }
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
          budget,
          in.reservation,
          in.accepted.encoding(),
          in.accepted.protocol(),
          in.accepted.incomingTenant(),
          in.allowed,
          in.startNanos,
          done);
    }
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

  /** First buffer of a chunked body, and its first reservation. */
  static final int CHUNKED_INITIAL_BYTES = 64 * 1024;

  private static Protocol protocolOf(HttpRequest req) {
    return WriteRequestCheck.protocol(req.headers().get(HttpHeaderNames.CONTENT_TYPE));
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
    while (!busy && !blocked && !queued.isEmpty()) {
      Object msg = queued.poll();
      if (msg instanceof HttpRequest) {
        pipelined--;
      }
      if (closing) {
        ReferenceCountUtil.release(msg);
      } else {
        handle(ctx, msg);
      }
    }
    if (busy || blocked || closing || !ctx.channel().isActive()) {
      return;
    }
    if (inputShut) {
      closeAfterLastWrite(ctx);
      return;
    }
    ctx.channel().config().setAutoRead(true);
    ctx.read();
  }

  /**
   * Stops reading while the client does not read its answers: the outbound buffer went past its
   * high water mark with the last answer. Reading resumes once it drains below the low mark; a
   * client that reads nothing for {@code relay.server.read-timeout} is disconnected.
   */
  private void blockUntilWritable(ChannelHandlerContext ctx) {
    if (blocked || closing) {
      return;
    }
    blocked = true;
    ctx.channel().config().setAutoRead(false);
    notReadingTimeout =
        ctx.executor()
            .schedule(
                () -> {
                  if (blocked && ctx.channel().isActive()) {
                    metrics.connectionRejected("not_reading");
                    ctx.close();
                  }
                },
                config.readTimeout().toNanos(),
                TimeUnit.NANOSECONDS);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    if (blocked && ctx.channel().isWritable()) {
      blocked = false;
      notReadingTimeout.cancel(false);
      if (!busy) {
        drainQueued(ctx);
      }
    }
    super.channelWritabilityChanged(ctx);
  }

  /** Closes the connection once its last answer is written (the client closed its side). */
  private void closeAfterLastWrite(ChannelHandlerContext ctx) {
    closing = true;
    if (lastWrite == null || lastWrite.isDone()) {
      ctx.close();
    } else {
      lastWrite.addListener(f -> ctx.close());
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
      lastWrite = ctx.writeAndFlush(r);
      if (!ctx.channel().isWritable()) {
        blockUntilWritable(ctx);
      }
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
    if (evt instanceof ChannelInputShutdownEvent) {
      // The client sent everything it will send (a half-close): what it sent is answered, then the
      // connection closes. A body cut short can never complete.
      inputShut = true;
      Incoming in = incoming;
      if (in != null) {
        abortAndAnswer(
            ctx,
            in,
            Answer.closing(400, "the client closed the connection before the end of the body"));
      } else if (skipping != null) {
        skipping = null;
        closeAfterLastWrite(ctx);
      } else if (!busy && !blocked && queued.isEmpty() && !closing) {
        closeAfterLastWrite(ctx);
      }
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    if (notReadingTimeout != null) {
      notReadingTimeout.cancel(false);
    }
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
      if (ERROR_LOG.allow(ctx.executor().ticker().nanoTime())) {
        LOG.log(Level.WARNING, "connection closed after an error inside the relay", cause);
      }
    }
    ctx.close();
  }
}
