package io.prwrelay.server.http;

import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.prwrelay.server.config.ServerConfig;
import io.prwrelay.server.config.TenantConfig;
import io.prwrelay.server.lane.DeliveryLedger;
import io.prwrelay.server.lane.Lanes;
import io.prwrelay.server.metrics.RelayMetrics;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The relay's HTTP ingress as a whole: what every accepted connection's pipeline holds (idle
 * timeout, HTTP/1.1 codec, {@link RequestHeadTimeout}, {@code 100-continue}, {@link
 * IngressHandler}), the pieces its handlers share, and the server's readiness.
 */
public final class HttpIngress {
  final ServerConfig server;
  final WriteRequestCheck check;
  final WriteProcessor processor;
  final AdminHandler admin;
  final RelayMetrics metrics;
  final ServerState state = new ServerState();

  /**
   * @param lanes carry the tenant batches of every write request downstream
   * @param ledger remembers tenants delivered by requests the sender will retry
   * @param timeout deadline of one sender request in the lanes
   */
  public HttpIngress(
      ServerConfig server,
      TenantConfig tenants,
      Lanes lanes,
      DeliveryLedger ledger,
      Duration timeout,
      RelayMetrics metrics) {
    this.server = server;
    this.check = new WriteRequestCheck(server.maxRequestBytes(), tenants.trustedHeader());
    this.processor =
        new WriteProcessor(server.maxDecompressedBytes(), tenants, lanes, ledger, timeout, metrics);
    this.admin = new AdminHandler(metrics, state);
    this.metrics = metrics;
  }

  /** Sets up the pipeline of one accepted connection. */
  public void initChannel(Channel ch) {
    ch.pipeline()
        .addLast(new IdleStateHandler(0, 0, server.idleTimeout().toNanos(), TimeUnit.NANOSECONDS))
        .addLast(new HttpServerCodec(4096, 16 * 1024, 64 * 1024))
        .addLast(new RequestHeadTimeout(server.readTimeout(), metrics))
        .addLast(new HttpServerExpectContinueHandler())
        .addLast(newHandler());
  }

  /** The ingress handler of one connection. */
  IngressHandler newHandler() {
    return new IngressHandler(this);
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
