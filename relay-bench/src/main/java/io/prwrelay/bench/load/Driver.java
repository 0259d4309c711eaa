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
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The sending side: {@link Options#connections()} keep-alive HTTP/1.1 connections, each on one
 * event loop with one request in flight. In max-rate mode a connection sends its next request as
 * soon as the previous answer arrived and latency runs from the write. With a target rate each
 * connection follows its own schedule ({@code connections / rate} apart, staggered) and latency
 * runs from the scheduled time, so an answer that holds up later requests is charged to them too
 * (no coordinated omission); sends the warm-up fell behind on are dropped when measuring starts. A
 * failed connection is reopened for the next request, 100 ms later.
 */
final class Driver {
  private static final long RETRY_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final int ERROR_BODY_CHARS = 300;

  private RequestPool pool;
  private RunStats stats;
  private final EventLoopGroup group;
  private final InetSocketAddress address;
  private final String path;
  private final HttpHeaders headers;
  private final long timeoutNanos;
  private final long intervalNanos;
  private final List<Connection> connections = new ArrayList<>();

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
    this.intervalNanos =
        options.rate() == 0 ? 0 : (long) (1e9 * options.connections() / options.rate());
    int connectMillis = (int) Math.max(1, Math.min(5_000, options.timeout().toMillis()));
    Bootstrap bootstrap =
        new Bootstrap()
            .channel(Transport.socketChannel())
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectMillis);
    int n = options.connections();
    for (int i = 0; i < n; i++) {
      connections.add(
          new Connection(group.next(), bootstrap, (long) ((double) intervalNanos * i / n)));
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
    for (Connection c : connections) {
      c.loop.execute(() -> c.begin(stats.startNanos + c.offsetNanos));
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

  /** One request on the wire. */
  private static final class InFlight {
    final RequestPool.Body body;
    final boolean measured;
    final long origin;
    Channel channel;
    ScheduledFuture<?> timeout;
    int status;
    boolean keepAlive = true;
    StringBuilder errorBody;

    InFlight(RequestPool.Body body, boolean measured, long origin) {
      this.body = body;
      this.measured = measured;
      this.origin = origin;
    }
  }

  /** One connection; every field is touched only on its event loop (after {@link #connect()}). */
  private final class Connection {
    final EventLoop loop;
    final Bootstrap bootstrap;
    Channel channel;
    InFlight inFlight;
    long nextIntended;
    final long offsetNanos;
    boolean measuring;
    boolean finished;

    Connection(EventLoop loop, Bootstrap template, long offsetNanos) {
      this.loop = loop;
      this.offsetNanos = offsetNanos;
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

    void begin(long firstIntended) {
      nextIntended = firstIntended;
      scheduleNext();
    }

    void scheduleNext() {
      if (intervalNanos > 0) {
        long delay = nextIntended - System.nanoTime();
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
      if (measured && !measuring) {
        measuring = true;
        if (intervalNanos > 0 && nextIntended - stats.measureStartNanos < 0) {
          // Requests the warm-up fell behind on are not owed to the measured phase.
          nextIntended = stats.measureStartNanos + offsetNanos;
          if (nextIntended - now > 0) {
            loop.schedule(this::send, nextIntended - now, TimeUnit.NANOSECONDS);
            return;
          }
        }
      }
      if (measured && !stats.claimMeasured()) {
        finish();
        return;
      }
      long origin = now;
      if (intervalNanos > 0) {
        origin = nextIntended;
        nextIntended += intervalNanos;
      }
      InFlight f = new InFlight(pool.next(), measured, origin);
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
          new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, path, f.body.content());
      request.headers().set(headers);
      HttpUtil.setContentLength(request, f.body.compressedBytes());
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
      stats.answered(f.body, f.measured, f.status, System.nanoTime() - f.origin);
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
      stats.transportError(f.body, f.measured, kind, detail);
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
