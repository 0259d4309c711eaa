package io.prwrelay.server.testing;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.prwrelay.oracle.v1.WriteRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.xerial.snappy.Snappy;

/**
 * A real in-process HTTP server standing in for Cortex: records every request (headers and
 * decompressed body) and answers from a script: per tenant, a queue of replies (status, headers,
 * body, delay, or a connection reset); when a tenant's queue is empty it answers 200 with an empty
 * body, as Cortex does. Listens on 127.0.0.1 only.
 */
public final class ScriptedDownstream implements AutoCloseable {
  /** One scripted reply. */
  public record Reply(
      int status, Map<String, String> headers, String body, Duration delay, boolean resets) {
    public static Reply status(int status) {
      return new Reply(status, Map.of(), "", Duration.ZERO, false);
    }

    public static Reply status(int status, String body) {
      return new Reply(status, Map.of(), body, Duration.ZERO, false);
    }

    public static Reply retryAfter(int status, String retryAfter) {
      return new Reply(
          status, Map.of("Retry-After", retryAfter), "slow down", Duration.ZERO, false);
    }

    public static Reply slow(Duration delay) {
      return new Reply(200, Map.of(), "", delay, false);
    }

    public static Reply reset() {
      return new Reply(0, Map.of(), "", Duration.ZERO, true);
    }
  }

  /** One request as received. */
  public record Received(
      String method, String uri, Map<String, String> headers, byte[] body, long atNanos) {
    public String header(String name) {
      for (Map.Entry<String, String> e : headers.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name)) {
          return e.getValue();
        }
      }
      return null;
    }

    public String tenant() {
      return header("X-Scope-OrgID");
    }

    /** The body decoded with the oracle classes. */
    public WriteRequest writeRequest() throws Exception {
      return WriteRequest.parseFrom(body);
    }
  }

  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final Channel server;
  private final Map<String, Deque<Reply>> scripts = new HashMap<>();
  private final List<Received> received = new ArrayList<>();
  private String tenantHeader = "X-Scope-OrgID";
  private final String scheme;
  private final java.util.concurrent.atomic.AtomicInteger connections =
      new java.util.concurrent.atomic.AtomicInteger();

  public ScriptedDownstream() throws InterruptedException {
    this(null);
  }

  /** A downstream speaking HTTPS with {@code ssl} (or plain HTTP when null). */
  public ScriptedDownstream(io.netty.handler.ssl.SslContext ssl) throws InterruptedException {
    this.scheme = ssl == null ? "http" : "https";
    server =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.SO_LINGER, 0)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    connections.incrementAndGet();
                    if (ssl != null) {
                      ch.pipeline().addLast(ssl.newHandler(ch.alloc()));
                    }
                    ch.pipeline()
                        .addLast(new HttpServerCodec())
                        .addLast(new HttpObjectAggregator(64 << 20))
                        .addLast(new Handler());
                  }
                })
            .bind("127.0.0.1", 0)
            .sync()
            .channel();
  }

  /** TCP connections accepted so far. */
  public int connectionsAccepted() {
    return connections.get();
  }

  public int port() {
    return ((java.net.InetSocketAddress) server.localAddress()).getPort();
  }

  /** Push URL of this downstream. */
  public String url() {
    return scheme + "://127.0.0.1:" + port() + "/api/v1/push";
  }

  public ScriptedDownstream tenantHeader(String name) {
    this.tenantHeader = name;
    return this;
  }

  /**
   * Queues replies for {@code tenant} (use {@code "*"} for requests of any tenant without a
   * script).
   */
  public synchronized ScriptedDownstream script(String tenant, Reply... replies) {
    scripts.computeIfAbsent(tenant, t -> new ArrayDeque<>()).addAll(List.of(replies));
    return this;
  }

  /** Every request received so far, in arrival order. */
  public synchronized List<Received> received() {
    return new ArrayList<>(received);
  }

  /** Requests received so far, by tenant header, in arrival order. */
  public synchronized Map<String, List<Received>> byTenant() {
    Map<String, List<Received>> m = new LinkedHashMap<>();
    for (Received r : received) {
      m.computeIfAbsent(String.valueOf(r.header(tenantHeader)), t -> new ArrayList<>()).add(r);
    }
    return m;
  }

  private synchronized Reply next(String tenant) {
    Deque<Reply> q = scripts.get(tenant);
    if (q == null || q.isEmpty()) {
      q = scripts.get("*");
    }
    return q == null || q.isEmpty() ? Reply.status(200) : q.poll();
  }

  private synchronized void record(Received r) {
    received.add(r);
  }

  @Override
  public void close() {
    server.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
  }

  private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) throws Exception {
      Map<String, String> headers = new LinkedHashMap<>();
      req.headers().forEach(e -> headers.put(e.getKey(), e.getValue()));
      byte[] raw = ByteBufUtil.getBytes(req.content());
      byte[] body;
      try {
        body =
            "snappy".equalsIgnoreCase(req.headers().get("Content-Encoding"))
                ? Snappy.uncompress(raw)
                : raw;
      } catch (java.io.IOException e) {
        body = raw;
      }
      String tenant = req.headers().get(tenantHeader);
      record(new Received(req.method().name(), req.uri(), headers, body, System.nanoTime()));
      Reply reply = next(tenant);
      if (reply.resets()) {
        ctx.close();
        return;
      }
      Runnable answer =
          () -> {
            FullHttpResponse res =
                new DefaultFullHttpResponse(
                    HttpVersion.HTTP_1_1,
                    HttpResponseStatus.valueOf(reply.status()),
                    Unpooled.copiedBuffer(reply.body(), StandardCharsets.UTF_8));
            res.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, res.content().readableBytes());
            reply.headers().forEach(res.headers()::set);
            ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
          };
      if (reply.delay().isZero()) {
        answer.run();
      } else {
        ctx.executor().schedule(answer, reply.delay().toMillis(), TimeUnit.MILLISECONDS);
      }
    }
  }
}
