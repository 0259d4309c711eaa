package io.prwrelay.server.ingress;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.internal.PlatformDependent;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.config.ServerConfig;
import io.prwrelay.server.config.TenantConfig;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.insight.TenantInsight;
import io.prwrelay.server.lane.DeliveryLedger;
import io.prwrelay.server.lane.Lanes;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.write.InflightBudget;
import io.prwrelay.server.write.WriteProcessor;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The relay's HTTP ingress as a whole: what every accepted connection's pipeline holds (TLS when
 * configured, idle timeout, HTTP/1.1 codec, {@link RequestHeadTimeout}, {@link IngressHandler}),
 * the pieces its handlers share (checks, auth, the {@link InflightBudget}), the bound on open
 * connections, and the server's readiness.
 *
 * <p>Connections beyond {@code relay.server.max-connections} get the {@link OverloadedHandler} (503
 * to their first request); beyond twice that many they are closed as soon as accepted.
 */
public final class HttpIngress {
  private static final Logger LOG = Logger.getLogger(HttpIngress.class.getName());

  final ServerConfig server;
  final WriteRequestCheck check;
  final WriteProcessor processor;
  final AdminHandler admin;
  final RelayMetrics metrics;
  final InflightBudget budget;
  final InboundAuth auth;
  final ServerState state = new ServerState();
  private final IngressTls tls;
  private final AtomicInteger connections = new AtomicInteger();

  /**
   * @param lanes carry the tenant batches of every write request downstream
   * @param ledger remembers tenants delivered by requests the sender will retry
   * @param timeout deadline of one sender request in the lanes
   * @param protocol the Remote Write version PRW 2.0 input is sent downstream in (the lanes' own)
   * @param insight counts every routed request per tenant and answers {@code /tenants}
   * @throws IOException naming the key of a TLS or token file that cannot be read or used
   */
  public HttpIngress(
      ServerConfig server,
      TenantConfig tenants,
      Lanes lanes,
      DeliveryLedger ledger,
      Duration timeout,
      RelayMetrics metrics,
      DownstreamProtocol protocol,
      TenantInsight insight)
      throws IOException {
    this.server = server;
    this.check = new WriteRequestCheck(server.maxRequestBytes(), tenants.trustedHeader());
    this.processor =
        new WriteProcessor(
            server.maxDecompressedBytes(),
            server.maxDecompressionRatio(),
            tenants,
            lanes,
            ledger,
            timeout,
            metrics,
            protocol,
            insight);
    this.admin = new AdminHandler(metrics, state, insight);
    this.metrics = metrics;
    long maxDirect = PlatformDependent.maxDirectMemory();
    long maxHeap = Runtime.getRuntime().maxMemory();
    this.budget =
        new InflightBudget(
            server.inflightLimit(maxDirect, maxHeap),
            server.inflightLimitPerClient(maxDirect, maxHeap));
    metrics.inflightBudget(budget::inUse, budget.limit());
    metrics.connections(connections::get, server.maxConnections());
    this.auth = new InboundAuth(server.auth(), metrics);
    this.tls = server.tls().enabled() ? new IngressTls(server.tls(), metrics) : null;
  }

  /**
   * Has every write request pass the per-tenant limits ({@code relay.limits.*}); called before the
   * ingress listens.
   */
  public void limits(io.prwrelay.server.limits.TenantLimits limits) {
    processor.limits(limits);
  }

  /**
   * The ingress of {@code config}: its server and tenant settings, and the downstream timeout as
   * the deadline of one sender request in the lanes.
   *
   * @param lanes carry the tenant batches of every write request downstream
   * @param ledger remembers tenants delivered by requests the sender will retry
   * @param protocol the Remote Write version PRW 2.0 input is sent downstream in (the lanes' own)
   * @throws IOException naming the key of a TLS or token file that cannot be read or used
   */
  public static HttpIngress of(
      RelayConfig config,
      Lanes lanes,
      DeliveryLedger ledger,
      RelayMetrics metrics,
      DownstreamProtocol protocol)
      throws IOException {
    return of(
        config, lanes, ledger, metrics, protocol, TenantInsight.of(config.metrics().insight()));
  }

  /**
   * {@link #of(RelayConfig, Lanes, DeliveryLedger, RelayMetrics, DownstreamProtocol)} with the
   * tenant insight the relay also tells about lanes and queues.
   *
   * @throws IOException naming the key of a TLS or token file that cannot be read or used
   */
  public static HttpIngress of(
      RelayConfig config,
      Lanes lanes,
      DeliveryLedger ledger,
      RelayMetrics metrics,
      DownstreamProtocol protocol,
      TenantInsight insight)
      throws IOException {
    return new HttpIngress(
        config.server(),
        config.tenant(),
        lanes,
        ledger,
        config.downstream().timeout(),
        metrics,
        protocol,
        insight);
  }

  /** Sets up the pipeline of one accepted connection. */
  public void initChannel(Channel ch) {
    int open = connections.incrementAndGet();
    ch.closeFuture().addListener(f -> connections.decrementAndGet());
    int max = server.maxConnections();
    if (open > 2L * max) {
      metrics.connectionRejected("closed");
      ch.close();
      return;
    }
    ChannelPipeline p = ch.pipeline();
    if (tls != null) {
      p.addLast(new TlsDetector(tls, metrics));
    }
    if (open > max) {
      metrics.connectionRejected("answered");
      p.addLast(new IdleStateHandler(0, 0, server.readTimeout().toNanos(), TimeUnit.NANOSECONDS))
          .addLast(codec())
          .addLast(new OverloadedHandler(max));
      return;
    }
    if (tls == null) {
      // A client that half-closes after its request still gets the answer (IngressHandler).
      ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
    }
    p.addLast(new IdleStateHandler(0, 0, server.idleTimeout().toNanos(), TimeUnit.NANOSECONDS))
        .addLast(codec())
        .addLast(new RequestHeadTimeout(server.readTimeout(), metrics))
        .addLast(newHandler());
  }

  /**
   * Most header fields of a request head (and of its trailers). 16 KiB of one-letter headers would
   * otherwise be about 4,000 header objects, some 300 KB of heap for one head, held while its
   * request is read; Prometheus and vmagent send fewer than ten. Apache httpd's default ({@code
   * LimitRequestFields}) is the same.
   */
  static final int MAX_HEADER_FIELDS = 100;

  /** Most bytes of a request's header section (and of its trailers): Netty's default, 8 KiB, x2. */
  static final int MAX_HEADER_BYTES = 16 * 1024;

  /**
   * The HTTP/1.1 codec of one connection: Netty's response encoder and its request decoder with the
   * header names senders send shared ({@link IngressDecoder}): request line at most 4 KiB, headers
   * at most {@link #MAX_HEADER_BYTES} and {@link #MAX_HEADER_FIELDS} fields (else 431), content in
   * chunks of at most 64 KiB. It sets no bound on requests decoded ahead of their answers: the
   * handler keeps its own ({@link IngressHandler#MAX_PIPELINED}) and answers past it. Which answer
   * is to a {@code HEAD} request (no body) the {@link AnswerWriter} knows, as it writes the answers
   * in request order.
   */
  static ChannelHandler codec() {
    HttpDecoderConfig config =
        new HttpDecoderConfig()
            .setMaxInitialLineLength(4096)
            .setMaxHeaderSize(MAX_HEADER_BYTES)
            .setMaxChunkSize(64 * 1024)
            .setHeadersFactory(SmallHeaders.factory(SmallHeaders.HEADERS, 8, MAX_HEADER_FIELDS))
            .setTrailersFactory(
                SmallHeaders.factory(SmallHeaders.TRAILERS_VALIDATION, 2, MAX_HEADER_FIELDS));
    return new CombinedChannelDuplexHandler<>(
        new IngressDecoder(config), new HttpResponseEncoder());
  }

  /** The ingress handler of one connection. */
  IngressHandler newHandler() {
    return new IngressHandler(this);
  }

  /** Whether {@link #reloadChangedFiles()} has files to watch (TLS or a bearer token file). */
  public boolean watchesFiles() {
    return tls != null || server.auth().bearerTokenFile() != null;
  }

  /**
   * Re-reads the TLS files and the bearer token file when they changed. Reads files: call it off
   * the event loops.
   */
  public void reloadChangedFiles() {
    // Each file on its own, and nothing escapes: an exception would cancel every later check.
    if (tls != null) {
      reload("tls", tls::reloadIfChanged);
    }
    reload("bearer-token-file", auth::reloadIfChanged);
  }

  private void reload(String file, Runnable check) {
    try {
      check.run();
    } catch (RuntimeException | Error e) {
      metrics.reloaded(file, false);
      LOG.log(Level.WARNING, "cannot reload " + file + "; the previous one stays in use", e);
    }
  }

  /** The TLS provider in use ({@code openssl} or {@code jdk}), or {@code null} without TLS. */
  public String tlsProvider() {
    return tls == null ? null : tls.provider();
  }

  /** The server is listening: {@code /-/ready} answers 200. */
  public void listening() {
    state.listening();
  }

  /** Shutdown began: {@code /-/ready} answers 503 and every answer closes its connection. */
  public void draining() {
    state.draining();
  }
}
