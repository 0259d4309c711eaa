package io.prwrelay.server.downstream;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.pool.AbstractChannelPoolHandler;
import io.netty.channel.pool.ChannelHealthChecker;
import io.netty.channel.pool.FixedChannelPool;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.prwrelay.server.config.ConfigKeys;
import io.prwrelay.server.config.DownstreamConfig;
import io.prwrelay.server.config.RelayVersion;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * Pooled keep-alive HTTP/1.1 client for the downstream (Cortex/Mimir push endpoint).
 *
 * <p>One Netty {@link FixedChannelPool} per event loop, each bounded to its share of {@code
 * relay.downstream.max-connections}. A request is sent on a connection of the caller's own event
 * loop, so the whole exchange — acquire, write, response, release, retry timers — runs on one
 * thread without locks. Each call is one attempt; {@link Delivery} decides about retries.
 */
public final class DownstreamClient implements TenantSender, AutoCloseable {
  /** Largest downstream response body kept (for error messages); longer bodies are cut. */
  static final int MAX_RESPONSE_BODY = 64 * 1024;

  private static final String TENANT_PLACEHOLDER = "%7Btenant%7D";

  private static final String REMOTE_WRITE_VERSION = "X-Prometheus-Remote-Write-Version";

  private final Map<EventExecutor, FixedChannelPool> pools = new IdentityHashMap<>();
  private final Map<EventExecutor, Integer> connections = new IdentityHashMap<>();

  /** Attempts not completed yet, so that {@link #close()} can complete them. */
  private final Set<Attempt> inFlight = ConcurrentHashMap.newKeySet();

  private final String host;
  private final String hostHeader;
  private final String pathTemplate;
  private final boolean tenantInPath;
  private final String tenantHeader;
  private final String authorization;
  private final String userAgent = "prw-relay/" + RelayVersion.VERSION;

  /**
   * @param group event loops the ingress also runs on; one pool is created per loop
   * @param channelClass socket channel class of {@code group}'s transport
   * @param allocator buffers of the downstream connections
   * @throws IOException when the TLS context of an https downstream cannot be built
   */
  public DownstreamClient(
      DownstreamConfig config,
      EventLoopGroup group,
      Class<? extends SocketChannel> channelClass,
      ByteBufAllocator allocator)
      throws IOException {
    URI url = config.url();
    this.host = url.getHost();
    boolean https = config.https();
    int port = url.getPort() > 0 ? url.getPort() : https ? 443 : 80;
    boolean defaultPort = url.getPort() < 0;
    this.hostHeader =
        (host.contains(":") ? "[" + host + "]" : host) + (defaultPort ? "" : ":" + port);
    String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
    this.pathTemplate = url.getRawQuery() == null ? path : path + "?" + url.getRawQuery();
    this.tenantInPath = pathTemplate.contains(TENANT_PLACEHOLDER);
    this.tenantHeader = config.tenantHeader();
    this.authorization = config.auth().authorization().orElse(null);
    SslContext sslContext = https ? sslContext(config.tls()) : null;
    int loops = 0;
    for (EventExecutor ignored : group) {
      loops++;
    }
    int connectMillis = (int) Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis());
    int index = 0;
    for (EventExecutor executor : group) {
      EventLoop loop = (EventLoop) executor;
      int perLoop = share(config.maxConnections(), loops, index++);
      Bootstrap b =
          new Bootstrap()
              .group(loop)
              .channel(channelClass)
              .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectMillis)
              .option(ChannelOption.TCP_NODELAY, true)
              .option(ChannelOption.ALLOCATOR, allocator)
              .option(ChannelOption.SO_KEEPALIVE, true)
              .remoteAddress(host, port);
      FixedChannelPool pool =
          new FixedChannelPool(
              b,
              new AbstractChannelPoolHandler() {
                @Override
                public void channelCreated(Channel ch) {
                  if (sslContext != null) {
                    ch.pipeline().addLast(sslContext.newHandler(ch.alloc(), host, port));
                  }
                  ch.pipeline()
                      .addLast(new HttpClientCodec())
                      .addLast(new HttpObjectAggregator(MAX_RESPONSE_BODY, true))
                      .addLast(new ResponseHandler());
                }
              },
              ChannelHealthChecker.ACTIVE,
              FixedChannelPool.AcquireTimeoutAction.FAIL,
              config.attemptTimeout().toMillis(),
              perLoop,
              Integer.MAX_VALUE,
              true,
              true);
      pools.put(loop, pool);
      connections.put(loop, perLoop);
    }
  }

  private static SslContext sslContext(DownstreamConfig.Tls tls) throws IOException {
    try {
      SslContextBuilder b = SslContextBuilder.forClient();
      if (tls.insecureSkipVerify()) {
        b.trustManager(InsecureTrustManagerFactory.INSTANCE);
      } else if (tls.caFile() != null) {
        b.trustManager(tls.caFile().toFile());
      }
      return b.build();
    } catch (SSLException | IllegalArgumentException e) {
      String what =
          tls.caFile() != null ? ConfigKeys.TLS_CA_FILE.name() + " " + tls.caFile() : "TLS";
      throw new IOException(what + ": " + e.getMessage(), e);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Writes a retained duplicate of {@code body} on a pooled connection of {@code loop}.
   */
  /**
   * Loop {@code index}'s share of {@code max} connections over {@code loops} loops: the shares add
   * up to {@code max} exactly (the first {@code max % loops} loops get one more), and every loop
   * gets at least one, since a loop without a connection could not send at all.
   */
  static int share(int max, int loops, int index) {
    return Math.max(1, max / loops + (index < max % loops ? 1 : 0));
  }

  @Override
  public int connections(EventLoop loop) {
    Integer n = connections.get(loop);
    return n == null ? Integer.MAX_VALUE : n;
  }

  @Override
  public Future<AttemptOutcome> send(
      EventLoop loop, String tenant, ByteBuf body, long timeoutNanos) {
    return send(loop, tenant, Protocol.V1, body, timeoutNanos);
  }

  @Override
  public Future<AttemptOutcome> send(
      EventLoop loop, String tenant, Protocol protocol, ByteBuf body, long timeoutNanos) {
    Promise<AttemptOutcome> promise = loop.newPromise();
    FixedChannelPool pool = pools.get(loop);
    if (pool == null) {
      throw new IllegalArgumentException("event loop is not one of the client's group");
    }
    Attempt attempt = new Attempt(loop, promise, pool, inFlight);
    inFlight.add(attempt);
    attempt.timeout =
        loop.schedule(
            () ->
                attempt.fail(
                    "no response within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"),
            timeoutNanos,
            TimeUnit.NANOSECONDS);
    pool.acquire()
        .addListener(
            (Future<Channel> f) -> {
              if (!f.isSuccess()) {
                attempt.fail("cannot connect to " + hostHeader + ": " + describe(f.cause()));
                return;
              }
              Channel ch = f.getNow();
              if (promise.isDone()) {
                pool.release(ch);
                return;
              }
              attempt.channel = ch;
              ch.pipeline().get(ResponseHandler.class).begin(attempt);
              ch.writeAndFlush(request(tenant, protocol, body))
                  .addListener(
                      w -> {
                        if (!w.isSuccess()) {
                          attempt.fail(
                              "write to " + hostHeader + " failed: " + describe(w.cause()));
                        }
                      });
            });
    return promise;
  }

  private FullHttpRequest request(String tenant, Protocol protocol, ByteBuf body) {
    String path = tenantInPath ? pathTemplate.replace(TENANT_PLACEHOLDER, tenant) : pathTemplate;
    FullHttpRequest req =
        new DefaultFullHttpRequest(
            HttpVersion.HTTP_1_1, HttpMethod.POST, path, body.retainedDuplicate());
    HttpHeaders h = req.headers();
    h.set(HttpHeaderNames.HOST, hostHeader);
    h.set(HttpHeaderNames.CONTENT_TYPE, protocol.contentType());
    h.set(HttpHeaderNames.CONTENT_ENCODING, "snappy");
    h.set(REMOTE_WRITE_VERSION, protocol.version());
    h.set(HttpHeaderNames.USER_AGENT, userAgent);
    h.set(tenantHeader, tenant);
    h.set(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
    h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
    if (authorization != null) {
      h.set(HttpHeaderNames.AUTHORIZATION, authorization);
    }
    return req;
  }

  static String describe(Throwable t) {
    if (t == null) {
      return "unknown error";
    }
    String m = t.getMessage();
    return m == null || m.isEmpty() ? t.getClass().getSimpleName() : m;
  }

  /**
   * Completes every attempt still in flight with a transport failure (its connection is closed), on
   * its event loop, so that callers release what they lent it before the loops stop; then closes
   * every pool and waits (up to 5 s each) until its idle connections are closed. Call it while the
   * event loops still run, and not on one of them: a pool closes its idle connections from Netty's
   * GlobalEventExecutor, waiting without limit for each close to run on the connection's event
   * loop. A close handed to a loop that is already stopping can be dropped unrun; that wait then
   * blocks the GlobalEventExecutor, which every event loop group needs to report its termination,
   * for the rest of the process.
   */
  @Override
  public void close() {
    List<Future<Void>> closing = new ArrayList<>(pools.size());
    for (Map.Entry<EventExecutor, FixedChannelPool> e : pools.entrySet()) {
      EventExecutor loop = e.getKey();
      FixedChannelPool pool = e.getValue();
      Runnable failInFlight =
          () -> {
            for (Attempt a : List.copyOf(inFlight)) {
              if (a.loop == loop) {
                a.fail("the relay is shutting down");
              }
            }
          };
      if (loop.inEventLoop()) {
        failInFlight.run();
      } else if (!loop.isShuttingDown()) {
        loop.submit(failInFlight).awaitUninterruptibly(5, TimeUnit.SECONDS);
      }
      closing.add(pool.closeAsync());
    }
    for (Future<Void> f : closing) {
      f.awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
  }

  /** One attempt's state; completed exactly once, on the event loop. */
  static final class Attempt {
    final EventExecutor loop;
    final Promise<AttemptOutcome> promise;
    final FixedChannelPool pool;
    final Set<Attempt> inFlight;
    Channel channel;
    ScheduledFuture<?> timeout;

    Attempt(
        EventExecutor loop,
        Promise<AttemptOutcome> promise,
        FixedChannelPool pool,
        Set<Attempt> inFlight) {
      this.loop = loop;
      this.promise = promise;
      this.pool = pool;
      this.inFlight = inFlight;
    }

    /** Completes with a response; the connection goes back to the pool or is closed. */
    void complete(AttemptOutcome outcome, boolean keepAlive) {
      finish(outcome, keepAlive);
    }

    /** Completes with a transport failure; the connection, if any, is closed. */
    void fail(String message) {
      finish(AttemptOutcome.transport(message), false);
    }

    /** Completes once: cancels the timeout, returns (or closes and returns) the connection. */
    private void finish(AttemptOutcome outcome, boolean reuseConnection) {
      if (promise.isDone()) {
        return;
      }
      inFlight.remove(this);
      timeout.cancel(false);
      Channel ch = channel;
      channel = null;
      if (ch != null) {
        ch.pipeline().get(ResponseHandler.class).end();
        if (!reuseConnection) {
          ch.close();
        }
        pool.release(ch);
      }
      promise.setSuccess(outcome);
    }
  }
}
