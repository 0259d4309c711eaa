package io.prwrelay.testkit;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
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
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A real HTTP server on 127.0.0.1 standing in for Cortex: the downstream of the demo, of the load
 * generator and of the tests.
 *
 * <p>Every {@code POST} is read as a remote-write request: its snappy body is decompressed and its
 * series counted (PRW 1.0, or 2.0 when the Content-Type says so), under the tenant named by the
 * tenant header ({@code X-Scope-OrgID} unless {@link #tenantHeader(String) changed}; {@link
 * #NO_TENANT} without one). A body that is not snappy ({@code 415}) or does not decompress or frame
 * as a request ({@code 400}) is refused and counted as an {@link #errors() error}. Every other
 * request is answered from the tenant's script: a queue of {@link Reply replies} (status, headers,
 * body, delay, or a connection reset), then the tenant's {@link #rule(String, Supplier) rule} (a
 * reply for every request, such as a tenant that is always throttled), falling back to the script
 * of {@code "*"}, and to {@code 200} with an empty body, as Cortex answers, when none has a reply.
 *
 * <p>{@link #counts()} sums what each tenant received; except in a {@link #counting(int, int)}
 * downstream, {@link #received()} also keeps every request with its headers and decompressed body.
 * The server runs on its own NIO event loops (the plain, portable transport: it is a test peer, not
 * the system under test).
 */
public final class ScriptedDownstream implements AutoCloseable {
  /** The tenant header Cortex reads, and the default of {@link #tenantHeader(String)}. */
  public static final String TENANT_HEADER = "X-Scope-OrgID";

  /** Tenant under which requests without the tenant header are counted. */
  public static final String NO_TENANT = "(no tenant header)";

  private static final int MAX_BODY = 256 << 20;
  private static final int MAX_DECOMPRESSED = 1 << 30;
  private static final Reply OK = Reply.status(200);

  /** One scripted reply. */
  public record Reply(
      int status, Map<String, String> headers, String body, Duration delay, boolean resets) {
    /** Answers {@code status} with an empty body. */
    public static Reply status(int status) {
      return new Reply(status, Map.of(), "", Duration.ZERO, false);
    }

    /** Answers {@code status} with {@code body} as text. */
    public static Reply status(int status, String body) {
      return new Reply(status, Map.of(), body, Duration.ZERO, false);
    }

    /** Answers {@code status} with a {@code Retry-After} header, as Mimir does on 429 and 5xx. */
    public static Reply retryAfter(int status, String retryAfter) {
      return new Reply(
          status, Map.of("Retry-After", retryAfter), "slow down", Duration.ZERO, false);
    }

    /** Answers {@code 200} after {@code delay}. */
    public static Reply slow(Duration delay) {
      return new Reply(200, Map.of(), "", delay, false);
    }

    /** Resets the connection instead of answering. */
    public static Reply reset() {
      return new Reply(0, Map.of(), "", Duration.ZERO, true);
    }
  }

  /**
   * One request as received.
   *
   * @param body the decompressed body; the body as received when it could not be decompressed
   * @param compressed the body as received, compressed
   */
  public record Received(
      String method,
      String uri,
      Map<String, String> headers,
      byte[] body,
      long atNanos,
      byte[] compressed) {
    /** The value of header {@code name} (any case), or {@code null}. */
    public String header(String name) {
      for (Map.Entry<String, String> e : headers.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name)) {
          return e.getValue();
        }
      }
      return null;
    }

    /** The {@code X-Scope-OrgID} header, or {@code null}. */
    public String tenant() {
      return header(TENANT_HEADER);
    }
  }

  /**
   * What one tenant received so far.
   *
   * @param requests requests answered 2xx
   * @param series series in those requests
   * @param compressedBytes their bodies as received
   * @param bytes their bodies decompressed
   * @param answers every answer to the tenant by HTTP status, refusals included; a reset counts as
   *     status 0
   */
  public record TenantCount(
      long requests, long series, long compressedBytes, long bytes, Map<Integer, Long> answers) {}

  private static final class Counters {
    final LongAdder requests = new LongAdder();
    final LongAdder series = new LongAdder();
    final LongAdder compressedBytes = new LongAdder();
    final LongAdder bytes = new LongAdder();
    final Map<Integer, LongAdder> answers = new ConcurrentHashMap<>();

    void answered(int status) {
      answers.computeIfAbsent(status, s -> new LongAdder()).increment();
    }
  }

  private final EventLoopGroup group;
  private final Channel server;
  private final String scheme;
  private final boolean recording;
  private volatile String tenantHeader;
  private volatile boolean refusesRemoteWrite2;
  private final Map<String, Queue<Reply>> scripts = new ConcurrentHashMap<>();
  private final Map<String, Function<ByteBuf, Reply>> rules = new ConcurrentHashMap<>();
  private final List<Received> received = new ArrayList<>();
  private final Map<String, Counters> tenants = new ConcurrentHashMap<>();
  private final AtomicInteger connections = new AtomicInteger();
  private final LongAdder errors = new LongAdder();
  private final AtomicReference<String> firstError = new AtomicReference<>();

  /** A recording downstream on any free port, speaking HTTP. */
  public ScriptedDownstream() throws IOException {
    this(0, 1, true, null);
  }

  /** A recording downstream on any free port, speaking HTTPS with {@code ssl}. */
  public ScriptedDownstream(SslContext ssl) throws IOException {
    this(0, 1, true, ssl);
  }

  /**
   * A downstream for long runs: it keeps {@link #counts()} but not the requests themselves.
   *
   * @param port port on 127.0.0.1; 0 for any free port
   * @param threads event loop threads
   * @throws IOException naming the port when it cannot be bound
   */
  public static ScriptedDownstream counting(int port, int threads) throws IOException {
    return new ScriptedDownstream(port, threads, false, null);
  }

  /**
   * A recording downstream, as {@link #ScriptedDownstream()}, on a given port: for a relay that is
   * configured before the downstream starts (another process, a container).
   *
   * @param port port on 127.0.0.1; 0 for any free port
   * @throws IOException naming the port when it cannot be bound
   */
  public static ScriptedDownstream recording(int port) throws IOException {
    return new ScriptedDownstream(port, 1, true, null);
  }

  private ScriptedDownstream(int port, int threads, boolean recording, SslContext ssl)
      throws IOException {
    this.scheme = ssl == null ? "http" : "https";
    this.recording = recording;
    this.tenantHeader = TENANT_HEADER;
    this.group = new MultiThreadIoEventLoopGroup(threads, NioIoHandler.newFactory());
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .option(ChannelOption.SO_BACKLOG, 1024)
            .childOption(ChannelOption.TCP_NODELAY, true)
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
                        .addLast(new HttpObjectAggregator(MAX_BODY))
                        .addLast(new Handler());
                  }
                });
    try {
      this.server = bootstrap.bind("127.0.0.1", port).syncUninterruptibly().channel();
    } catch (Exception e) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
      throw new IOException("cannot listen on 127.0.0.1:" + port + ": " + e.getMessage(), e);
    }
  }

  /** The port it listens on. */
  public int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  /** Its push URL, to configure as the relay's {@code relay.downstream.url}. */
  public String url() {
    return scheme + "://127.0.0.1:" + port() + "/api/v1/push";
  }

  /** Changes the header naming the tenant ({@code X-Scope-OrgID}), for requests from now on. */
  public ScriptedDownstream tenantHeader(String name) {
    this.tenantHeader = name;
    return this;
  }

  /**
   * From now on answers every PRW 2.0 request 415 before any script, as Cortex does without {@code
   * -distributor.remote-writev2-enabled}; such answers are counted per tenant but are not {@link
   * #errors()}.
   */
  public ScriptedDownstream refuseRemoteWrite2() {
    this.refusesRemoteWrite2 = true;
    return this;
  }

  /**
   * Queues replies for {@code tenant} (use {@code "*"} for requests of any tenant without a
   * script).
   */
  public ScriptedDownstream script(String tenant, Reply... replies) {
    scripts.computeIfAbsent(tenant, t -> new ConcurrentLinkedQueue<>()).addAll(List.of(replies));
    return this;
  }

  /**
   * Answers every request of {@code tenant} whose script is empty with {@code rule.get()}, called
   * on the downstream's event loop for each request; a {@code null} reply falls through to the
   * script of {@code "*"} and to {@code 200}. Replaces an earlier rule of the tenant.
   */
  public ScriptedDownstream rule(String tenant, Supplier<Reply> rule) {
    rules.put(tenant, body -> rule.get());
    return this;
  }

  /**
   * As {@link #rule(String, Supplier)}, with a reply chosen from the request's decompressed body:
   * for a downstream that reads more of each request than its framing, such as one that refuses
   * every request its own protobuf classes cannot parse, as Cortex does.
   */
  public ScriptedDownstream bodyRule(String tenant, Function<byte[], Reply> rule) {
    rules.put(tenant, body -> rule.apply(ByteBufUtil.getBytes(body)));
    return this;
  }

  /** TCP connections accepted so far. */
  public int connectionsAccepted() {
    return connections.get();
  }

  /** Every request received so far, in arrival order; empty when not recording. */
  public List<Received> received() {
    synchronized (received) {
      return new ArrayList<>(received);
    }
  }

  /** {@link #received()} by tenant header, tenants and requests in arrival order. */
  public Map<String, List<Received>> byTenant() {
    Map<String, List<Received>> m = new LinkedHashMap<>();
    for (Received r : received()) {
      String tenant = r.header(tenantHeader);
      m.computeIfAbsent(tenant == null ? NO_TENANT : tenant, t -> new ArrayList<>()).add(r);
    }
    return m;
  }

  /** What each tenant received so far, by tenant ID in order. */
  public Map<String, TenantCount> counts() {
    Map<String, TenantCount> m = new TreeMap<>();
    tenants.forEach(
        (tenant, c) -> {
          Map<Integer, Long> answers = new TreeMap<>();
          c.answers.forEach((status, n) -> answers.put(status, n.sum()));
          m.put(
              tenant,
              new TenantCount(
                  c.requests.sum(),
                  c.series.sum(),
                  c.compressedBytes.sum(),
                  c.bytes.sum(),
                  answers));
        });
    return m;
  }

  /** Series in requests answered 2xx so far, over every tenant. */
  public long totalSeries() {
    long n = 0;
    for (Counters c : tenants.values()) {
      n += c.series.sum();
    }
    return n;
  }

  /** Requests refused because their body could not be read (415 or 400). */
  public long errors() {
    return errors.sum();
  }

  /** The first refusal's status and reason, or {@code null}. */
  public String firstError() {
    return firstError.get();
  }

  @Override
  public void close() {
    server.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
  }

  /**
   * @param body the decompressed body, borrowed
   */
  private Reply next(String tenant, ByteBuf body) {
    Queue<Reply> script = scripts.get(tenant);
    Reply reply = script == null ? null : script.poll();
    if (reply == null) {
      Function<ByteBuf, Reply> rule = rules.get(tenant);
      reply = rule == null ? null : rule.apply(body);
    }
    if (reply == null) {
      Queue<Reply> any = scripts.get("*");
      reply = any == null ? null : any.poll();
    }
    return reply == null ? OK : reply;
  }

  private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      String header = request.headers().get(tenantHeader);
      Counters tenant =
          tenants.computeIfAbsent(header == null ? NO_TENANT : header, t -> new Counters());
      boolean keepAlive = HttpUtil.isKeepAlive(request);
      ByteBuf content = request.content();
      ByteBuf body = null;
      int series = -1;
      String problem;
      HttpResponseStatus refusal = HttpResponseStatus.BAD_REQUEST;
      String encoding = request.headers().get(HttpHeaderNames.CONTENT_ENCODING);
      if (!request.method().equals(HttpMethod.POST)) {
        problem = "method " + request.method() + ": only POST";
        refusal = HttpResponseStatus.METHOD_NOT_ALLOWED;
      } else if (!"snappy".equalsIgnoreCase(encoding)) {
        problem = "Content-Encoding " + encoding + ": only snappy";
        refusal = HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE;
      } else {
        try {
          body = ReceivedBodies.decompress(content, ctx.alloc(), MAX_DECOMPRESSED);
          String type = request.headers().get(HttpHeaderNames.CONTENT_TYPE);
          boolean v2 = type != null && type.contains("io.prometheus.write.v2.Request");
          if (v2 && refusesRemoteWrite2) {
            if (recording) {
              record(request, ByteBufUtil.getBytes(body), content);
            }
            body.release();
            tenant.answered(415);
            answer(
                ctx,
                new Reply(415, Map.of(), "remote write 2.0 is not enabled", Duration.ZERO, false),
                keepAlive);
            return;
          }
          series = ReceivedBodies.countSeries(body, v2);
          problem = series < 0 ? "body is not a well-formed remote-write request" : null;
        } catch (IOException e) {
          problem = "body is not a snappy block: " + e.getMessage();
        }
      }
      try {
        if (recording) {
          record(request, ByteBufUtil.getBytes(body == null ? content : body), content);
        }
        if (problem != null) {
          errors.increment();
          firstError.compareAndSet(null, refusal.code() + " " + problem);
          tenant.answered(refusal.code());
          answer(
              ctx, new Reply(refusal.code(), Map.of(), problem, Duration.ZERO, false), keepAlive);
          return;
        }
        Reply reply = next(header == null ? NO_TENANT : header, body);
        tenant.answered(reply.status());
        if (reply.status() / 100 == 2) {
          tenant.requests.increment();
          tenant.series.add(series);
          tenant.compressedBytes.add(content.readableBytes());
          tenant.bytes.add(body.readableBytes());
        }
        if (reply.resets()) {
          ctx.close();
        } else if (reply.delay().isZero()) {
          answer(ctx, reply, keepAlive);
        } else {
          ctx.executor()
              .schedule(
                  () -> answer(ctx, reply, keepAlive),
                  reply.delay().toNanos(),
                  TimeUnit.NANOSECONDS);
        }
      } finally {
        if (body != null) {
          body.release();
        }
      }
    }

    /**
     * @param content borrowed; the body as received
     */
    private void record(FullHttpRequest request, byte[] body, ByteBuf content) {
      Map<String, String> headers = new LinkedHashMap<>();
      request.headers().forEach(e -> headers.put(e.getKey(), e.getValue()));
      Received r =
          new Received(
              request.method().name(),
              request.uri(),
              headers,
              body,
              System.nanoTime(),
              ByteBufUtil.getBytes(content));
      synchronized (received) {
        received.add(r);
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  private static void answer(ChannelHandlerContext ctx, Reply reply, boolean keepAlive) {
    ByteBuf text =
        reply.body().isEmpty()
            ? Unpooled.EMPTY_BUFFER
            : Unpooled.copiedBuffer(reply.body(), StandardCharsets.UTF_8);
    FullHttpResponse response =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(reply.status()), text);
    response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, text.readableBytes());
    if (text.isReadable()) {
      response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN);
    }
    reply.headers().forEach(response.headers()::set);
    if (keepAlive) {
      ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    } else {
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }
  }
}
