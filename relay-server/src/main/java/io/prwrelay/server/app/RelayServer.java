package io.prwrelay.server.app;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.Ticker;
import io.prwrelay.server.config.DeliveryConfig;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.config.RetainedMemory;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.DownstreamCheck;
import io.prwrelay.server.downstream.DownstreamClient;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.ingress.HttpIngress;
import io.prwrelay.server.insight.TenantInsight;
import io.prwrelay.server.lane.DeliveryLedger;
import io.prwrelay.server.lane.LaneLog;
import io.prwrelay.server.lane.LaneObserver;
import io.prwrelay.server.lane.LaneSettings;
import io.prwrelay.server.lane.Lanes;
import io.prwrelay.server.lane.NewLaneBudget;
import io.prwrelay.server.limits.TenantLimits;
import io.prwrelay.server.metrics.InsightMetrics;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.metrics.RuntimeMetrics;
import io.prwrelay.server.queue.QueueFullPolicy;
import io.prwrelay.server.queue.QueueLimits;
import io.prwrelay.server.queue.QueueStore;
import io.prwrelay.server.transport.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * The relay, assembled: event loops (epoll when available, NIO otherwise) that run both the HTTP
 * ingress and the pooled downstream client, the metrics, and the lifecycle (start, readiness,
 * graceful shutdown). Each component gets only its section of the {@link RelayConfig}. Listens only
 * on the configured host and port.
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

  /** The long-lived structures' bounds in effect, logged once listening. */
  private final RetainedMemory.Plan retained;

  private final EventLoopGroup group;
  private final DownstreamClient client;
  private final QueueStore store;
  private final Lanes lanes;
  private final RelayMetrics metrics;
  private final RuntimeMetrics runtime;
  private final LaneLog laneLog;
  private final HttpIngress ingress;
  private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  private Channel serverChannel;

  /** How often {@link #checkTenantLabels} looks at the series that carried no tenant label. */
  static final Duration TENANT_LABEL_CHECK_INTERVAL = Duration.ofMinutes(1);

  /** The scheduled {@link #checkTenantLabels}; null until started. */
  private ScheduledFuture<?> tenantLabelCheck;

  /** Ends the lane log's intervals ({@link LaneLog#tick}); null until started. */
  private ScheduledFuture<?> laneLogTicks;

  /** Checks the TLS and token files for changes, off the event loops; null when none is watched. */
  private ScheduledExecutorService reloader;

  /** The per-tenant limits, or {@code null} when none is configured. */
  private final TenantLimits limits;

  /** Re-reads the limits' overrides file and turns their windows, on its own thread. */
  private ScheduledExecutorService limitsTicker;

  /**
   * The relay of {@code config}, with the bounds of its long-lived structures fitted to the JVM's
   * maximum heap ({@link RetainedMemory}): once it listens, the bounds in effect are logged in one
   * line, and a warning names the keys set too high for the heap.
   *
   * @throws IOException when the downstream's TLS context cannot be built, the ingress TLS or token
   *     files cannot be used, or (queue mode) the queue directory cannot be used
   */
  public RelayServer(RelayConfig config) throws IOException {
    this(
        RetainedMemory.plan(
            config, Runtime.getRuntime().maxMemory(), config.server().eventLoops()));
  }

  private RelayServer(RetainedMemory.Plan retained) throws IOException {
    RelayConfig config = retained.config();
    this.retained = retained;
    this.config = config;
    this.metrics = new RelayMetrics(config.metrics().maxTenants(), ALLOCATOR);
    metrics.retainedBounds(retained.bounds());
    this.group = Transport.group(config.server().eventLoops());
    DeliveryConfig delivery = config.delivery();
    try {
      this.client =
          new DownstreamClient(config.downstream(), group, Transport.socketChannel(), ALLOCATOR);
      this.store = delivery.mode() == DeliveryConfig.Mode.QUEUE ? openQueues(delivery) : null;
    } catch (IOException | RuntimeException e) {
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
      throw e;
    }
    TenantInsight insight = TenantInsight.of(config.metrics().insight());
    insight.tenantRules(config.tenant().rules());
    if (store != null) {
      metrics.queues(store);
      insight.queues(store);
    }
    if (insight.enabled()) {
      metrics.activeSeries(insight::activeSeries);
      metrics.newSeries(insight::newSeriesPerSecond);
      metrics
          .insightMetrics()
          .topMetrics(tenant -> insight.topMetrics(tenant, InsightMetrics.MetricFigure::new));
    }
    DownstreamProtocol protocol = new DownstreamProtocol(config.downstream().protocol());
    metrics.downstreamProtocol(protocol);
    this.laneLog = new LaneLog(config.log().failureInterval(), Ticker.systemTicker());
    this.lanes =
        new Lanes(
            group,
            LaneSettings.of(config),
            client,
            ALLOCATOR,
            LaneObserver.all(metrics.laneObserver(), laneLog, insight),
            store == null
                ? null
                : new Lanes.Queues(
                    store,
                    System::currentTimeMillis,
                    config.server().maxDecompressedBytes(),
                    delivery.queue().directTimeout(),
                    delivery.queue().maxNewTenantsPerRequest(),
                    delivery.queue().maxNewTenantsPerSecond()),
            protocol);
    DeliveryConfig.Lanes lanesConfig = delivery.lanes();
    NewLaneBudget newLanes =
        new NewLaneBudget(lanesConfig.newPerSenderRate(), lanesConfig.newPerSenderBurst());
    lanes.limitNewLanes(newLanes);
    metrics.newLaneBudget(newLanes);
    Ticker ticker = Ticker.systemTicker();
    DeliveryLedger ledger =
        new DeliveryLedger(
            delivery.ledgerMaxEntries(),
            delivery.ledgerTtl().toNanos(),
            ticker::nanoTime,
            delivery.throttled());
    try {
      this.ingress = HttpIngress.of(config, lanes, ledger, metrics, protocol, insight);
    } catch (IOException | RuntimeException e) {
      lanes.close();
      if (store != null) {
        store.close();
      }
      client.close();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
      throw e;
    }
    if (config.limits().enabled()) {
      this.limits =
          new TenantLimits(
              config.limits(), System::nanoTime, ok -> metrics.reloaded("limits-overrides", ok));
      metrics.limits(limits);
      ingress.limits(limits);
      insight.limits(limits);
    } else {
      this.limits = null;
    }
    this.runtime = RuntimeMetrics.bind(metrics.registry(), ALLOCATOR, Transport.name());
  }

  private QueueStore openQueues(DeliveryConfig delivery) throws IOException {
    DeliveryConfig.Queue q = delivery.queue();
    QueueLimits limits =
        new QueueLimits(
            q.segmentBytes(),
            q.maxTenantBytes(),
            q.maxAge(),
            q.maxBytes(),
            q.fullPolicy() == DeliveryConfig.FullPolicy.DROP_OLDEST
                ? QueueFullPolicy.DROP_OLDEST
                : QueueFullPolicy.REFUSE);
    try {
      return QueueStore.open(delivery.queueDir(), limits, metrics.queueListener());
    } catch (IOException e) {
      throw new IOException(
          "relay.delivery.queue.dir " + delivery.queueDir() + ": " + e.getMessage(), e);
    }
  }

  /**
   * Binds the listen address; the server is ready when this returns.
   *
   * @throws IOException naming the address when it cannot be bound (in use, not local, no
   *     permission); the event loops are stopped then
   */
  public void start() throws InterruptedException, IOException {
    ServerBootstrap b =
        Transport.serverBootstrap(group)
            .option(ChannelOption.ALLOCATOR, ALLOCATOR)
            .childOption(ChannelOption.ALLOCATOR, ALLOCATOR)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel ch) {
                    connections.add(ch);
                    ingress.initChannel(ch);
                  }
                });
    String address = config.server().host() + ":" + config.server().port();
    ChannelFuture bound = b.bind(config.server().host(), config.server().port()).await();
    if (!bound.isSuccess()) {
      Throwable cause = bound.cause();
      lanes.close();
      if (store != null) {
        store.close();
      }
      client.close();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
      runtime.close();
      throw new IOException(
          "cannot listen on "
              + address
              + ": "
              + (cause == null ? "unknown error" : describe(cause)),
          cause);
    }
    serverChannel = bound.channel();
    LOG.info(retained.summary());
    if (retained.warning() != null) {
      LOG.warning(retained.warning());
    }
    if (ingress.tlsProvider() != null) {
      LOG.info("ingress speaks TLS only (provider " + ingress.tlsProvider() + ")");
    }
    if (ingress.watchesFiles()) {
      reloader =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "relay-file-reload");
                t.setDaemon(true);
                return t;
              });
      long every = config.server().reloadInterval().toNanos();
      reloader.scheduleWithFixedDelay(
          ingress::reloadChangedFiles, every, every, TimeUnit.NANOSECONDS);
    }
    if (limits != null) {
      limitsTicker =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "relay-limits");
                t.setDaemon(true);
                return t;
              });
      long every = config.limits().reloadPeriod().toNanos();
      limitsTicker.scheduleWithFixedDelay(limits::tick, every, every, TimeUnit.NANOSECONDS);
    }
    long checkEvery = TENANT_LABEL_CHECK_INTERVAL.toNanos();
    tenantLabelCheck =
        group
            .next()
            .scheduleAtFixedRate(
                this::checkTenantLabels, checkEvery, checkEvery, TimeUnit.NANOSECONDS);
    // A quarter of the interval: an interval ends at most a quarter late, whenever it began.
    long logEvery = Math.max(1, config.log().failureInterval().toNanos() / 4);
    laneLogTicks =
        group.next().scheduleAtFixedRate(laneLog::tick, logEvery, logEvery, TimeUnit.NANOSECONDS);
    ingress.listening();
  }

  /**
   * Warns (at most once per interval) when most series of the last interval carried none of the
   * tenant labels: a misspelt {@code relay.tenant.labels} sends every series to the default tenant.
   */
  private void checkTenantLabels() {
    String warning = metrics.tenantLabels().check(config.tenant().rules());
    if (warning != null) {
      LOG.warning(warning);
    }
  }

  private static String describe(Throwable t) {
    String m = t.getMessage();
    if (m == null || m.isEmpty()) {
      return t.getClass().getSimpleName();
    }
    // Netty's native transport says "bind(..) failed with error(-98): Address already in use".
    int colon = m.startsWith("bind(") ? m.lastIndexOf(": ") : -1;
    return colon >= 0 ? m.substring(colon + 2) : m;
  }

  /**
   * Sends the downstream one empty push as the default tenant and logs what it answered ({@link
   * DownstreamCheck}); returns at once. Readiness does not depend on it.
   */
  public Future<AttemptOutcome> checkDownstream() {
    return DownstreamCheck.run(
        client,
        group.next(),
        config.downstream(),
        config.tenant().rules().defaultTenantId(),
        config.delivery().mode() == DeliveryConfig.Mode.QUEUE);
  }

  /** The address actually bound (the port is known here when configured as 0). */
  public InetSocketAddress address() {
    return (InetSocketAddress) serverChannel.localAddress();
  }

  /** Transport in use: {@code epoll} or {@code nio}. */
  public String transport() {
    return Transport.name();
  }

  public RelayMetrics metrics() {
    return metrics;
  }

  /**
   * Stops accepting connections, lets in-flight requests finish for up to {@code grace}, then
   * closes every connection and releases the event loops.
   */
  public void shutdown(Duration grace) throws InterruptedException {
    ingress.draining();
    if (tenantLabelCheck != null) {
      tenantLabelCheck.cancel(false);
      laneLogTicks.cancel(false);
    }
    if (limitsTicker != null) {
      limitsTicker.shutdownNow();
    }
    if (reloader != null) {
      reloader.shutdownNow();
    }
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
    lanes.close();
    if (store != null) {
      store.close();
    }
    // client.close() returns once the pools have closed their idle connections; those closes run on
    // these loops, so the loops may stop only afterwards. The quiet period lets a task handed to a
    // loop while it winds down still run rather than be dropped.
    client.close();
    group
        .shutdownGracefully(100, 5000, TimeUnit.MILLISECONDS)
        .awaitUninterruptibly(10, TimeUnit.SECONDS);
    runtime.close();
  }

  @Override
  public void close() throws InterruptedException {
    shutdown(config.downstream().timeout().plusSeconds(1));
  }
}
