package io.prwrelay.server.ingress;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.prwrelay.server.config.ServerConfig;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.protocol.WrittenCounts;
import io.prwrelay.server.write.Answer;
import io.prwrelay.server.write.InflightBudget;
import io.prwrelay.server.write.LogLimiter;
import io.prwrelay.server.write.SenderKey;
import io.prwrelay.server.write.TenantAllowList;
import io.prwrelay.server.write.WriteProcessor;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The HTTP/1.1 ingress of one connection, as a state machine: takes requests one at a time, checks
 * a write request's credentials ({@link InboundAuth}, 401) and head ({@link WriteRequestCheck}),
 * names its {@link SenderKey}, admits its first body buffer against the {@link InflightBudget} (503
 * when over), answers {@code Expect: 100-continue} only then, collects its body ({@link
 * IncomingWrite}, reserved as it arrives) within the size cap, the read timeout and the stall
 * timeout, hands it to {@link WriteProcessor}, lets {@link AdminHandler} answer everything else,
 * and writes every answer in request order ({@link AnswerWriter}). An answer given before the body
 * is read closes the connection through {@link LingeringClose}.
 *
 * <p>The budget reservation of a write request is released exactly once: when it is answered, or
 * when its body is abandoned (413, 400, 408, the connection closing mid-body).
 *
 * <p>While a write request is being delivered, reading from the socket pauses and any pipelined
 * request already decoded is held ({@link Pipelining}), as it is while the client does not read its
 * answers. A body must arrive within {@code relay.server.read-timeout}, and without a pause as long
 * as {@code relay.server.body-stall-timeout} (else 408 and close); an idle connection is closed
 * after {@code relay.server.idle-timeout}. Time comes from the channel's event loop ticker.
 */
final class IngressHandler extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.server");

  /** At most one stack trace a minute for errors that end a connection; all are counted. */
  private static final LogLimiter ERROR_LOG = new LogLimiter(TimeUnit.MINUTES.toNanos(1));

  /**
   * Requests one connection may send ahead of their answers (HTTP/1.1 pipelining); the one past it
   * is answered 503 and the connection closed, without reading what follows.
   */
  static final int MAX_PIPELINED = 16;

  /**
   * First buffer of a body, and its first reservation: all a request's head holds of the budget
   * before its body's bytes arrive.
   */
  static final int FIRST_BUFFER_BYTES = 64 * 1024;

  private final ServerConfig config;
  private final WriteRequestCheck check;
  private final WriteProcessor processor;
  private final AdminHandler admin;
  private final RelayMetrics metrics;
  private final InflightBudget budget;
  private final InboundAuth auth;
  private final Pipelining pipelining;
  private final AnswerWriter writer;

  /** Write request whose body is being received, or null. */
  private IncomingWrite incoming;

  /** A write request is being processed and its answer is not yet written. */
  private boolean busy;

  /** Non-write request answered once its content has been consumed, or null. */
  private HttpRequest skipping;

  /** Path of {@link #skipping}. */
  private String skippingPath;

  /** What the credentials of {@link #skipping} may read. */
  private TenantAllowList skippingReader;

  /** The client closed its side: the connection closes once every request read is answered. */
  private boolean inputShut;

  /** The connection's body timer, made with the first body. */
  private BodyTimer bodyTimer;

  /** The write request being processed (after its body, until its answer), or null. */
  private IncomingWrite processing;

  /** The sender of the connection's last write request: reused while it is the same. */
  private SenderKey sender = SenderKey.UNKNOWN;

  /** Takes the answer of {@link #processing}; made once per connection. */
  private Consumer<Answer> processed;

  /**
   * @param ingress the server-wide pieces this connection shares with the others
   */
  IngressHandler(HttpIngress ingress) {
    this.config = ingress.server;
    this.check = ingress.check;
    this.processor = ingress.processor;
    this.admin = ingress.admin;
    this.metrics = ingress.metrics;
    this.budget = ingress.budget;
    this.auth = ingress.auth;
    this.pipelining = new Pipelining(MAX_PIPELINED, config.readTimeout(), metrics);
    this.writer = new AnswerWriter(this, ingress.state, pipelining);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (writer.closing()) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (busy || pipelining.holding()) {
      pipelining.hold(msg);
      return;
    }
    handle(ctx, msg);
  }

  private void handle(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof Pipelining.Overflow o) {
      metrics.otherRequest("pipelined", 503);
      writer.answer(
          ctx, o.head(), pipelining.overflowAnswer().forSenderOf(RequestHead.protocol(o.head())));
      return;
    }
    try {
      if (msg instanceof HttpRequest) {
        onRequest(ctx, (HttpRequest) msg);
      }
      if (msg instanceof HttpContent && !writer.closing()) {
        onContent(ctx, (HttpContent) msg);
      }
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  private void onRequest(ChannelHandlerContext ctx, HttpRequest req) {
    Answer unservable = RequestHead.unservable(req, metrics);
    if (unservable != null) {
      writer.answer(ctx, req, unservable);
      return;
    }
    String path = RequestHead.path(req.uri());
    if (WriteRequestCheck.WRITE_PATHS.contains(path) && req.method().equals(HttpMethod.POST)) {
      startWrite(ctx, req);
    } else {
      TenantAllowList reader = readerOf(req, path);
      if (reader == null) {
        metrics.otherRequest(AdminEndpoint.at(path).tag(), 401);
        writer.write(ctx, req, auth.unauthorized(), true);
        return;
      }
      AnswerWriter.continueIfExpected(ctx, req);
      skipping = req;
      skippingPath = path;
      skippingReader = reader;
      // Answered at the end of its body (none for most): that end must come within the read
      // timeout too, or one byte every few minutes would hold the connection and its head forever.
      armBodyTimer(ctx);
    }
  }

  /**
   * What the credentials of a request to an endpoint other than a write may read: everything,
   * unless {@code relay.server.auth.protect-metrics} protects the endpoint; {@code null} for 401.
   */
  private TenantAllowList readerOf(HttpRequest req, String path) {
    AdminEndpoint endpoint = AdminEndpoint.at(path);
    if (!auth.protectsMetrics() || endpoint == null || !endpoint.protectedLikeMetrics()) {
      return TenantAllowList.ANY;
    }
    return auth.authenticateReader(req.headers());
  }

  private void startWrite(ChannelHandlerContext ctx, HttpRequest req) {
    long start = now(ctx);
    metrics.requestStarted();
    TenantAllowList allowed = auth.authenticate(req.headers());
    if (allowed == null) {
      metricsFinished(ctx, 401, start);
      FullHttpResponse unauthorized = auth.unauthorized();
      if (RequestHead.protocol(req) == Protocol.V2) {
        // A PRW 2.0 sender learns from every answer what was written: nothing.
        WrittenCounts.ZERO.setOn(unauthorized.headers());
      }
      writer.write(ctx, req, unauthorized, true);
      return;
    }
    WriteRequestCheck.Result result = check.check(req);
    if (result instanceof WriteRequestCheck.Rejected rejected) {
      metricsFinished(ctx, rejected.answer().status(), start);
      writer.answer(ctx, req, rejected.answer());
      return;
    }
    WriteRequestCheck.Accepted accepted = (WriteRequestCheck.Accepted) result;
    long length = accepted.contentLength();
    // A body is reserved as it arrives, declared or chunked: admitted at its first buffer's size,
    // its reservation grows with the buffer (IncomingWrite.append), so a declaration alone holds
    // no more than that first buffer. A declared body's buffer grows to its declared size at most.
    int max = length >= 0 ? (int) length : config.maxRequestBytes();
    int initial = Math.min(FIRST_BUFFER_BYTES, max);
    sender = sender.with(clientAddress(ctx), allowed.credential());
    // A channel without an address and a request without credentials: only the total applies.
    InflightBudget.Admission admission =
        budget.admit(sender == SenderKey.UNKNOWN ? null : sender, initial);
    if (admission.reservation() == null) {
      metrics.inflightRejected(admission.refusal().tag);
      metricsFinished(ctx, 503, start);
      writer.answer(
          ctx, req, budget.refused(admission.refusal(), true).forSenderOf(accepted.protocol()));
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
      writer.answer(ctx, req, budget.refused(InflightBudget.Refusal.TOTAL, true));
      return;
    }
    AnswerWriter.continueIfExpected(ctx, req);
    incoming =
        new IncomingWrite(req, accepted, start, admission.reservation(), allowed, sender, body);
    armBodyTimer(ctx);
  }

  /**
   * The body of {@link #incoming} or {@link #skipping} must be complete within the read timeout
   * from now, and may not stall for the stall timeout.
   */
  private void armBodyTimer(ChannelHandlerContext ctx) {
    if (bodyTimer == null) {
      bodyTimer =
          new BodyTimer(
              ctx,
              () -> incoming != null || skipping != null,
              stalled -> readTimedOut(ctx, stalled));
    }
    bodyTimer.arm(config.readTimeout().toNanos(), config.bodyStallTimeout().toNanos());
  }

  private void onContent(ChannelHandlerContext ctx, HttpContent content) {
    IncomingWrite in = incoming;
    if (in == null) {
      if (skipping != null && bodyTimer != null) {
        bodyTimer.progressed();
      }
      if (content instanceof LastHttpContent && skipping != null) {
        HttpRequest req = skipping;
        skipping = null;
        writer.write(ctx, req, admin.respond(req, skippingPath, skippingReader), false);
      }
      return;
    }
    bodyTimer.progressed();
    Answer refused = in.append(content, ctx.alloc(), budget, metrics);
    if (refused != null) {
      abortAndAnswer(ctx, in, refused);
      return;
    }
    if (content instanceof LastHttpContent) {
      incoming = null;
      busy = true;
      processing = in;
      ctx.channel().config().setAutoRead(false);
      if (processed == null) {
        processed = answer -> onProcessed(ctx, answer);
      }
      processor.process(in.takeInput(ctx.channel().eventLoop(), ctx.alloc()), processed);
    }
  }

  /** Answers {@link #processing}, the one write request being processed, and goes on reading. */
  private void onProcessed(ChannelHandlerContext ctx, Answer answer) {
    IncomingWrite in = processing;
    processing = null;
    in.reservation.release();
    metricsFinished(ctx, answer.status(), in.startNanos);
    writer.answer(ctx, in.head, answer);
    busy = false;
    drainQueued(ctx);
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
    Object msg;
    while (!busy && (msg = pipelining.next()) != null) {
      if (writer.closing()) {
        ReferenceCountUtil.release(msg);
      } else {
        handle(ctx, msg);
      }
    }
    if (busy || pipelining.blocked() || writer.closing() || !ctx.channel().isActive()) {
      return;
    }
    if (inputShut) {
      writer.closeAfterLastWrite(ctx);
      return;
    }
    ctx.channel().config().setAutoRead(true);
    ctx.read();
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    if (pipelining.unblock(ctx) && !busy) {
      drainQueued(ctx);
    }
    super.channelWritabilityChanged(ctx);
  }

  /**
   * Ends {@link #incoming} or {@link #skipping} with 408: its body was not complete within the read
   * timeout, or {@code stalled}, no byte of it arrived within the stall timeout.
   */
  private void readTimedOut(ChannelHandlerContext ctx, boolean stalled) {
    String why =
        stalled
            ? "request body stalled: no bytes of it within "
                + ServerConfig.BODY_STALL_TIMEOUT.setTo(config.bodyStallTimeout())
            : "request body not received within "
                + ServerConfig.READ_TIMEOUT.setTo(config.readTimeout());
    Answer late = Answer.closing(408, why);
    IncomingWrite in = incoming;
    if (in != null) {
      abortAndAnswer(ctx, in, late);
    } else if (skipping != null && !pipelining.holding()) {
      // (While the relay holds what followed the head, the client is not reading its answers:
      // that has its own timeout, Pipelining's.)
      HttpRequest req = skipping;
      skipping = null;
      AdminEndpoint endpoint = AdminEndpoint.at(skippingPath);
      metrics.otherRequest(endpoint == null ? AdminHandler.OTHER_TAG : endpoint.tag(), 408);
      writer.answer(ctx, req, late);
    }
  }

  /**
   * Stops receiving {@code in} (its body and budget released) and answers it with {@code a}: its
   * body was not processed, so a Remote Write 2.0 sender learns that nothing was written.
   */
  private void abortAndAnswer(ChannelHandlerContext ctx, IncomingWrite in, Answer a) {
    incoming = null;
    in.abort();
    metricsFinished(ctx, a.status(), in.startNanos);
    writer.answer(ctx, in.head, a.forSenderOf(in.accepted.protocol()));
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
      IncomingWrite in = incoming;
      if (in != null) {
        abortAndAnswer(
            ctx,
            in,
            Answer.closing(400, "the client closed the connection before the end of the body"));
      } else if (skipping != null) {
        skipping = null;
        writer.closeAfterLastWrite(ctx);
      } else if (!busy && !pipelining.holding() && !writer.closing()) {
        writer.closeAfterLastWrite(ctx);
      }
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    IncomingWrite in = incoming;
    if (in != null) {
      incoming = null;
      in.abort();
      metricsFinished(ctx, 499, in.startNanos);
    }
    if (bodyTimer != null) {
      bodyTimer.cancel();
    }
    pipelining.close();
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
