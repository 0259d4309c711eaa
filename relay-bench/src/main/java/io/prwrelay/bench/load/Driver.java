package io.prwrelay.bench.load;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.prwrelay.server.transport.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sending side: {@link Options#connections()} keep-alive HTTP/1.1 connections, each on one
 * event loop with one request in flight. In max-rate mode a connection sends its next request as
 * soon as the previous answer arrived and latency runs from the write. With a target rate the
 * connections share one schedule ({@code 1 / rate} apart): a connection that is free claims the
 * next send time and sends then, so a request held up by a slow answer delays no other request as
 * long as some connection is free. Latency runs from the scheduled time, so when every connection
 * is busy the wait for one is charged to the request (no coordinated omission); sends the warm-up
 * fell behind on are dropped when measuring starts. A failed connection is reopened for the next
 * request, 100 ms later.
 *
 * <p>A request answered 429 or 5xx is sent again with the same bytes, up to {@link
 * Options#retries()} times, after the delay {@link Write} computes as Prometheus would. Unlike a
 * Prometheus shard, which holds everything behind a request it retries, the connection keeps
 * sending new requests meanwhile and sends the retry in place of its next request once it is due:
 * four connections would otherwise spend a bad tenant's backoff idle, and the run would measure the
 * generator's waiting instead of the relay. Retries still waiting when the run ends are abandoned.
 */
final class Driver {
  private static final long RETRY_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final int ERROR_BODY_CHARS = 300;
  private static final Comparator<Write> DUE_FIRST =
      (a, b) -> Long.compare(a.dueNanos - b.dueNanos, 0);

  private RequestPool pool;
  private RunStats stats;
  private final EventLoopGroup group;
  private final InetSocketAddress address;
  private final String path;
  private final HttpHeaders headers;
  private final long timeoutNanos;
  private final long intervalNanos;
  private final int retries;
  private final List<Connection> connections = new ArrayList<>();

  /** Rate mode: the next send time no connection has claimed yet. */
  private final AtomicLong nextSlot = new AtomicLong();

  Driver(Options options, URI relayUrl) {
    this.group = Transport.group(options.threads());
    int port = relayUrl.getPort() == -1 ? 80 : relayUrl.getPort();
    String host = relayUrl.getHost();
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    this.address = new InetSocketAddress(host, port);
    String p = relayUrl.getRawPath();
    this.path =
        (p == null || p.isEmpty() ? "/" : p)
            + (relayUrl.getRawQuery() == null ? "" : "?" + relayUrl.getRawQuery());
    this.headers =
        new DefaultHttpHeaders()
            .set(HttpHeaderNames.HOST, relayUrl.getRawAuthority())
            .set(HttpHeaderNames.CONTENT_TYPE, "application/x-protobuf")
            .set(HttpHeaderNames.CONTENT_ENCODING, options.encoding().header())
            .set(HttpHeaderNames.USER_AGENT, "prw-relay-loadgen")
            .set("X-Prometheus-Remote-Write-Version", "0.1.0");
    this.timeoutNanos = options.timeout().toNanos();
    this.retries = options.retries();
    this.intervalNanos = options.rate() == 0 ? 0 : (long) (1e9 / options.rate());
    int connectMillis = (int) Math.max(1, Math.min(5_000, options.timeout().toMillis()));
    Bootstrap bootstrap =
        new Bootstrap()
            .channel(Transport.socketChannel())
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectMillis);
    for (int i = 0; i < options.connections(); i++) {
      connections.add(new Connection(group.next(), bootstrap));
    }
  }

  /**
   * Opens every connection before the run starts, so an unreachable relay fails fast.
   *
   * @throws IOException naming the relay address and the cause
   */
  void connect() throws IOException, InterruptedException {
    for (Connection c : connections) {
      ChannelFuture f = c.bootstrap.connect(address);
      if (!f.await(10, TimeUnit.SECONDS) || !f.isSuccess()) {
        f.channel().close();
        Throwable cause = f.cause();
        throw new IOException(
            "cannot connect to the relay at "
                + address
                + ": "
                + (cause == null ? "no answer within 10 s" : describe(cause)),
            cause);
      }
      c.channel = f.channel();
    }
  }

  /** Starts sending bodies from {@code pool}, counting into {@code stats}; returns at once. */
  void start(RequestPool pool, RunStats stats) {
    this.pool = pool;
    this.stats = stats;
    nextSlot.set(stats.startNanos);
    for (Connection c : connections) {
      c.loop.execute(c::scheduleNext);
    }
  }

  /**
   * Rate mode: claims the next send time for a connection that is free at {@code now}. Once
   * measuring, send times the warm-up fell behind on are skipped: they are not owed to the measured
   * phase.
   */
  private long claimSlot(long now) {
    while (true) {
      long next = nextSlot.get();
      long slot =
          stats.isMeasured(now) && next - stats.measureStartNanos < 0
              ? stats.measureStartNanos
              : next;
      if (nextSlot.compareAndSet(next, slot + intervalNanos)) {
        return slot;
      }
    }
  }

  /** Closes every connection and stops the event loops; may be called more than once. */
  void close() {
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
  }

  private static String describe(Throwable t) {
    String m = t.getMessage();
    return m == null ? t.getClass().getSimpleName() : m;
  }

  /** Seconds of a {@code Retry-After} header in nanoseconds; 0 when absent or a date. */
  private static long retryAfterNanos(HttpResponse response) {
    String value = response.headers().get(HttpHeaderNames.RETRY_AFTER);
    if (value == null) {
      return 0;
    }
    try {
      return TimeUnit.SECONDS.toNanos(Math.max(0, Long.parseLong(value.trim())));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** One attempt on the wire. */
  private static final class InFlight {
    final Write write;
    final boolean measured;
    final long origin;
    Channel channel;
    ScheduledFuture<?> timeout;
    int status;
    long retryAfterNanos;
    boolean keepAlive = true;
    StringBuilder errorBody;

    InFlight(Write write, boolean measured, long origin) {
      this.write = write;
      this.measured = measured;
      this.origin = origin;
    }
  }

  /** One connection; every field is touched only on its event loop (after {@link #connect()}). */
  private final class Connection {
    final EventLoop loop;
    final Bootstrap bootstrap;
    final PriorityQueue<Write> due = new PriorityQueue<>(DUE_FIRST);
    Channel channel;
    InFlight inFlight;

    /** Rate mode: the send time this connection claimed. */
    long slot;

    boolean finished;

    Connection(EventLoop loop, Bootstrap template) {
      this.loop = loop;
      this.bootstrap =
          template
              .clone(loop)
              .handler(
                  new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                      ch.pipeline().addLast(new HttpClientCodec()).addLast(new ResponseHandler());
                    }
                  });
    }

    void scheduleNext() {
      if (finished) {
        return;
      }
      if (intervalNanos > 0) {
        long now = System.nanoTime();
        slot = claimSlot(now);
        long delay = slot - now;
        if (delay > 0) {
          loop.schedule(this::send, delay, TimeUnit.NANOSECONDS);
          return;
        }
      }
      send();
    }

    void send() {
      if (finished) {
        return;
      }
      long now = System.nanoTime();
      if (stats.stopping(now)) {
        finish();
        return;
      }
      boolean measured = stats.isMeasured(now);
      Write write = due.isEmpty() || due.peek().dueNanos - now > 0 ? null : due.poll();
      if (write == null) {
        if (measured && !stats.claimMeasured()) {
          finish();
          return;
        }
        write = pool.next();
      }
      write.attempts++;
      InFlight f = new InFlight(write, measured, intervalNanos > 0 ? slot : now);
      inFlight = f;
      f.timeout =
          loop.schedule(
              () -> {
                if (inFlight == f) {
                  fail(f, "timeout", "no answer within " + timeoutNanos / 1_000_000 + " ms");
                }
              },
              timeoutNanos,
              TimeUnit.NANOSECONDS);
      if (channel != null && channel.isActive()) {
        write(f);
      } else {
        reconnect(f);
      }
    }

    void reconnect(InFlight f) {
      bootstrap
          .connect(address)
          .addListener(
              (ChannelFuture cf) -> {
                if (!cf.isSuccess()) {
                  if (inFlight == f) {
                    fail(f, "connect failed", describe(cf.cause()));
                  }
                } else if (inFlight == f && (channel == null || !channel.isActive())) {
                  channel = cf.channel();
                  write(f);
                } else {
                  cf.channel().close();
                }
              });
    }

    void write(InFlight f) {
      f.channel = channel;
      FullHttpRequest request =
          new DefaultFullHttpRequest(
              HttpVersion.HTTP_1_1, HttpMethod.POST, path, f.write.content());
      request.headers().set(headers);
      HttpUtil.setContentLength(request, f.write.body.compressedBytes());
      channel
          .writeAndFlush(request)
          .addListener(
              w -> {
                if (!w.isSuccess() && inFlight == f) {
                  fail(f, "write failed", describe(w.cause()));
                }
              });
    }

    void onResponse(Channel ch, HttpResponse response) {
      InFlight f = inFlight;
      if (f == null || f.channel != ch) {
        return;
      }
      f.status = response.status().code();
      f.keepAlive = HttpUtil.isKeepAlive(response);
      if (f.status / 100 != 2) {
        f.errorBody = new StringBuilder();
        f.retryAfterNanos = retryAfterNanos(response);
      }
    }

    void onContent(Channel ch, HttpContent content) {
      InFlight f = inFlight;
      if (f == null || f.channel != ch || f.status == 0) {
        return;
      }
      if (f.errorBody != null && f.errorBody.length() < ERROR_BODY_CHARS) {
        int n = Math.min(content.content().readableBytes(), ERROR_BODY_CHARS);
        f.errorBody.append(
            content.content().toString(content.content().readerIndex(), n, StandardCharsets.UTF_8));
      }
      if (content instanceof LastHttpContent) {
        complete(f);
      }
    }

    void complete(InFlight f) {
      inFlight = null;
      f.timeout.cancel(false);
      long now = System.nanoTime();
      stats.answered(f.write, f.measured, f.status, now - f.origin);
      if (f.status / 100 != 2) {
        Write w = f.write;
        if ((f.status == 429 || f.status / 100 == 5) && w.attempts <= retries) {
          w.dueNanos = now + w.nextDelay(f.retryAfterNanos);
          due.add(w);
          stats.retrying(f.status);
        } else {
          stats.gaveUp(w);
        }
      }
      if (f.errorBody != null) {
        String text = f.errorBody.toString().strip();
        stats.errorSample(
            f.status,
            text.length() > ERROR_BODY_CHARS ? text.substring(0, ERROR_BODY_CHARS) : text);
      }
      if (!f.keepAlive) {
        dropChannel();
      }
      loop.execute(this::scheduleNext);
    }

    void onInactive(Channel ch) {
      if (ch == channel) {
        channel = null;
      }
      InFlight f = inFlight;
      if (f != null && f.channel == ch) {
        fail(f, "connection closed", "the relay closed the connection before answering");
      }
    }

    void onException(Channel ch, Throwable cause) {
      InFlight f = inFlight;
      if (f != null && f.channel == ch) {
        fail(f, "connection error", describe(cause));
      }
      ch.close();
    }

    void fail(InFlight f, String kind, String detail) {
      inFlight = null;
      f.timeout.cancel(false);
      stats.transportError(f.write, f.measured, kind, detail);
      if (f.channel != null && f.channel == channel) {
        dropChannel();
      }
      loop.schedule(this::scheduleNext, RETRY_DELAY_NANOS, TimeUnit.NANOSECONDS);
    }

    void dropChannel() {
      Channel ch = channel;
      channel = null;
      if (ch != null) {
        ch.close();
      }
    }

    void finish() {
      finished = true;
      dropChannel();
      for (Write w = due.poll(); w != null; w = due.poll()) {
        stats.abandoned(w);
      }
      stats.connectionFinished();
    }

    /** Hands answers to the connection and releases every message. */
    private final class ResponseHandler extends ChannelInboundHandlerAdapter {
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
          if (msg instanceof HttpResponse) {
            onResponse(ctx.channel(), (HttpResponse) msg);
          }
          if (msg instanceof HttpContent) {
            onContent(ctx.channel(), (HttpContent) msg);
          }
        } finally {
          ReferenceCountUtil.release(msg);
        }
      }

      @Override
      public void channelInactive(ChannelHandlerContext ctx) {
        onInactive(ctx.channel());
        ctx.fireChannelInactive();
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        onException(ctx.channel(), cause);
      }
    }
  }
}
