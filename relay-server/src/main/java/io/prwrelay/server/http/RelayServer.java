package io.prwrelay.server.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.downstream.DownstreamClient;
import io.prwrelay.server.metrics.RelayMetrics;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import javax.net.ssl.SSLException;

/**
 * The relay: a Netty HTTP server (epoll when available, NIO otherwise) whose event loops also run
 * the pooled downstream client. Listens only on {@code relay.server.host:relay.server.port}.
 */
public final class RelayServer implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.server");

  /**
   * Every buffer of the relay comes from Netty's pooled allocator: with its per-thread caches on
   * the event loops, request bodies, decompressed requests (heap, up to the 4 MiB chunk size) and
   * tenant batches are reused instead of allocated. Measured with PipelineBenchmark on the real
   * payload: 1.69 MB allocated per request with Netty 4.2's default adaptive allocator (the
   * decompressed heap buffer is not pooled), 7 KB with this one.
   */
  static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;

  private final RelayConfig config;
  private final boolean epoll;
  private final EventLoopGroup group;
  private final DownstreamClient client;
  private final RelayMetrics metrics;
  private final ServerState state = new ServerState();
  private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  private Channel serverChannel;

  public RelayServer(RelayConfig config) throws IOException {
    this.config = config;
    this.epoll = Epoll.isAvailable();
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    int threads =
        config.ioThreads() > 0 ? config.ioThreads() : Runtime.getRuntime().availableProcessors();
    this.group = new MultiThreadIoEventLoopGroup(threads, io);
    Class<? extends SocketChannel> clientChannel =
        epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    this.client = new DownstreamClient(config, group, clientChannel, sslContext(config), ALLOCATOR);
    this.metrics = new RelayMetrics(config.metricsMaxTenants(), ALLOCATOR);
  }

  private static SslContext sslContext(RelayConfig config) throws IOException {
    if (!config.downstreamUrl().getScheme().equalsIgnoreCase("https")) {
      return null;
    }
    try {
      SslContextBuilder b = SslContextBuilder.forClient();
      if (config.tlsInsecureSkipVerify()) {
        b.trustManager(InsecureTrustManagerFactory.INSTANCE);
      } else if (config.tlsCaFile().isPresent()) {
        b.trustManager(config.tlsCaFile().get().toFile());
      }
      return b.build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IOException("relay.downstream.tls: " + e.getMessage(), e);
    }
  }

  /** Binds the listen address; the server is ready when this returns. */
  public void start() throws InterruptedException {
    WriteProcessor processor =
        new WriteProcessor(config, client, metrics, new FailureLog(config.failureLogInterval()));
    Class<? extends ServerChannel> serverChannelClass =
        epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    long idleNanos = config.idleTimeout().toNanos();
    ServerBootstrap b =
        new ServerBootstrap()
            .group(group)
            .channel(serverChannelClass)
            .option(ChannelOption.SO_BACKLOG, 1024)
            .option(ChannelOption.ALLOCATOR, ALLOCATOR)
            .childOption(ChannelOption.ALLOCATOR, ALLOCATOR)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    connections.add(ch);
                    ch.pipeline()
                        .addLast(new IdleStateHandler(0, 0, idleNanos, TimeUnit.NANOSECONDS))
                        .addLast(new HttpServerCodec(4096, 16 * 1024, 64 * 1024))
                        .addLast(new HttpServerExpectContinueHandler())
                        .addLast(new IngressHandler(config, processor, metrics, state));
                  }
                });
    serverChannel = b.bind(config.serverHost(), config.serverPort()).sync().channel();
    state.listening();
  }

  /** The address actually bound (the port is known here when configured as 0). */
  public InetSocketAddress address() {
    return (InetSocketAddress) serverChannel.localAddress();
  }

  /** Transport in use: {@code epoll} or {@code nio}. */
  public String transport() {
    return epoll ? "epoll" : "nio";
  }

  public RelayMetrics metrics() {
    return metrics;
  }

  /**
   * Stops accepting connections, lets in-flight requests finish for up to {@code grace}, then
   * closes every connection and releases the event loops.
   */
  public void shutdown(Duration grace) throws InterruptedException {
    state.draining();
    if (serverChannel != null) {
      serverChannel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
    long deadline = System.nanoTime() + grace.toNanos();
    while (metrics.inFlight() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    if (metrics.inFlight() > 0) {
      LOG.warning(metrics.inFlight() + " requests still in flight at shutdown; closing them");
    }
    connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    // client.close() returns once the pools have closed their idle connections; those closes run on
    // these loops, so the loops may stop only afterwards. The quiet period lets a task handed to a
    // loop while it winds down still run rather than be dropped.
    client.close();
    group
        .shutdownGracefully(100, 5000, TimeUnit.MILLISECONDS)
        .awaitUninterruptibly(10, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    shutdown(config.downstreamTimeout().plusSeconds(1));
  }
}
