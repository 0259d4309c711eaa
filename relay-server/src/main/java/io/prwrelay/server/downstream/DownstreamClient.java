package io.prwrelay.server.downstream;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.prwrelay.server.config.DownstreamConfig;
import io.prwrelay.server.config.RelayVersion;
import io.prwrelay.server.protocol.Protocol;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;

/**
 * Pooled keep-alive HTTP/1.1 client for the downstream (Cortex/Mimir push endpoint).
 *
 * <p>One {@link LoopConnections} per event loop, each bounded to its share of {@code
 * relay.downstream.max-connections}. A request is sent on a connection of the caller's own event
 * loop, so the whole exchange — connection, write, response, release, deadline — runs on one thread
 * without locks. Each call is one attempt; the caller decides about retries.
 *
 * <p>The request head is not an {@code HttpRequest}: {@link RequestHead} holds its bytes, encoded
 * once, and each request writes them (with the tenant and length filled in) next to the body. Nor
 * is the response an {@code HttpResponse}: {@link ResponseHandler} reads it from the connection's
 * bytes with a {@link ResponseParser}, which keeps only what the outcome needs. The pipeline
 * therefore has no HTTP codec at all.
 */
public final class DownstreamClient implements TenantSender, AutoCloseable {
  /**
   * Largest downstream response body read (its start becomes the outcome's message); a longer one
   * closes the connection and fails the attempt as a transport failure.
   */
  static final int MAX_RESPONSE_BODY = 64 * 1024;

  private final Map<EventExecutor, LoopConnections> loops = new IdentityHashMap<>();

  /**
   * @param group event loops the ingress also runs on; each gets its own {@link LoopConnections}
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
    String host = url.getHost();
    boolean https = config.https();
    int port = url.getPort() > 0 ? url.getPort() : https ? 443 : 80;
    boolean defaultPort = url.getPort() < 0;
    String hostHeader =
        (host.contains(":") ? "[" + host + "]" : host) + (defaultPort ? "" : ":" + port);
    String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
    RequestHead head =
        new RequestHead(
            url.getRawQuery() == null ? path : path + "?" + url.getRawQuery(),
            hostHeader,
            "prw-relay/" + RelayVersion.VERSION,
            config.tenantHeader(),
            config.auth().authorization().orElse(null));
    SslContext sslContext = https ? sslContext(config.tls()) : null;
    int loopCount = 0;
    for (EventExecutor ignored : group) {
      loopCount++;
    }
    int connectMillis = (int) Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis());
    int index = 0;
    for (EventExecutor executor : group) {
      EventLoop loop = (EventLoop) executor;
      Bootstrap b =
          new Bootstrap()
              .group(loop)
              .channel(channelClass)
              .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectMillis)
              .option(ChannelOption.TCP_NODELAY, true)
              .option(ChannelOption.ALLOCATOR, allocator)
              .option(ChannelOption.SO_KEEPALIVE, true)
              .remoteAddress(host, port)
              .handler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      if (sslContext != null) {
                        ch.pipeline().addLast(sslContext.newHandler(ch.alloc(), host, port));
                      }
                      ch.pipeline().addLast(new ResponseHandler());
                    }
                  });
      int perLoop = share(config.maxConnections(), loopCount, index++);
      loops.put(loop, new LoopConnections(loop, b, head, perLoop));
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
          tls.caFile() != null ? DownstreamConfig.TLS_CA_FILE.name() + " " + tls.caFile() : "TLS";
      throw new IOException(what + ": " + e.getMessage(), e);
    }
  }

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
    LoopConnections c = loops.get(loop);
    return c == null ? Integer.MAX_VALUE : c.max();
  }

  @Override
  public Future<AttemptOutcome> send(
      EventLoop loop, String tenant, ByteBuf body, long timeoutNanos) {
    return send(loop, tenant, Protocol.V1, body, timeoutNanos);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Writes the request head and a retained duplicate of {@code body} on a pooled connection of
   * {@code loop}.
   */
  @Override
  public Future<AttemptOutcome> send(
      EventLoop loop, String tenant, Protocol protocol, ByteBuf body, long timeoutNanos) {
    return send(loop, tenant, protocol, 0, body, timeoutNanos);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Writes the request head (with {@code Retry-Attempt} when {@code retryAttempt > 0}) and a
   * retained duplicate of {@code body} on a pooled connection of {@code loop}.
   */
  @Override
  public Future<AttemptOutcome> send(
      EventLoop loop,
      String tenant,
      Protocol protocol,
      int retryAttempt,
      ByteBuf body,
      long timeoutNanos) {
    LoopConnections connections = loops.get(loop);
    if (connections == null) {
      throw new IllegalArgumentException("event loop is not one of the client's group");
    }
    Attempt attempt =
        new Attempt(
            connections,
            tenant,
            protocol,
            retryAttempt,
            body,
            timeoutNanos,
            loop.ticker().nanoTime());
    if (loop.inEventLoop()) {
      connections.send(attempt);
    } else {
      loop.execute(() -> connections.send(attempt));
    }
    return attempt;
  }

  static String describe(Throwable t) {
    if (t == null) {
      return "unknown error";
    }
    if (t instanceof ConnectTimeoutException) {
      return "connect timed out";
    }
    if (t instanceof UnknownHostException || t instanceof UnresolvedAddressException) {
      return "cannot resolve the downstream host";
    }
    String m = t.getMessage();
    if (t instanceof ConnectException) {
      return m != null && m.toLowerCase(Locale.ROOT).contains("refused")
          ? "connection refused"
          : "cannot connect";
    }
    return m == null || m.isEmpty()
        ? t.getClass().getSimpleName()
        : ADDRESS.matcher(m).replaceAll("the downstream");
  }

  /**
   * A socket address in an exception's message ({@code host/1.2.3.4:9009}, {@code /[::1]:9009}):
   * answers to senders name no downstream address.
   */
  private static final Pattern ADDRESS =
      Pattern.compile("[\\w.-]*/[0-9A-Fa-f.:\\[\\]%]+:\\d+|[\\w.-]+:\\d{2,5}\\b");

  /**
   * Completes every attempt still in flight with a transport failure (its connection is closed), on
   * its event loop, so that callers release what they lent it before the loops stop; then closes
   * every connection and waits (up to 5 s each) until they are closed. Call it while the event
   * loops still run, and not on one of them.
   */
  @Override
  public void close() {
    List<ChannelFuture> closing = new ArrayList<>();
    for (LoopConnections c : loops.values()) {
      if (c.loop.inEventLoop()) {
        closing.addAll(c.close());
      } else if (!c.loop.isShuttingDown()) {
        Future<List<ChannelFuture>> f = c.loop.submit(c::close);
        if (f.awaitUninterruptibly(5, TimeUnit.SECONDS) && f.isSuccess()) {
          closing.addAll(f.getNow());
        }
      }
    }
    for (ChannelFuture f : closing) {
      f.awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
  }
}
