package io.prwrelay.server.downstream;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.transport.Transport;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The {@link TenantSender} contract of the real client: {@link DownstreamClient} on one event loop
 * with one connection, in front of a real in-process downstream that plays the scripted answers.
 */
class DownstreamClientContractTest extends TenantSenderContractTest {
  private EventLoopGroup group;
  private ScriptedDownstream downstream;
  private DownstreamClient client;

  @BeforeEach
  void start() throws Exception {
    group = Transport.group(1);
    downstream = new ScriptedDownstream();
  }

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    downstream.close();
    group.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
  }

  @Override
  void answer(String tenant, Answer... answers) {
    for (Answer a : answers) {
      Reply reply =
          a.retryAfterSeconds() >= 0
              ? Reply.retryAfter(a.status(), Integer.toString(a.retryAfterSeconds()))
              : new Reply(a.status(), Map.of(), a.body(), a.delay(), false);
      downstream.script(tenant, reply);
    }
  }

  @Override
  TenantSender sender() throws Exception {
    if (client == null) {
      RelayConfig config =
          RelayConfig.load(
              null,
              Map.of(
                  "relay.downstream.url",
                  downstream.url(),
                  "relay.downstream.max-connections",
                  "1"),
              Map.of());
      client =
          new DownstreamClient(
              config.downstream(),
              group,
              Transport.socketChannel(),
              PooledByteBufAllocator.DEFAULT);
    }
    return client;
  }

  @Override
  EventLoop loop() {
    return (EventLoop) group.iterator().next();
  }

  @Override
  List<Sent> received(String tenant) {
    return downstream.byTenant().getOrDefault(tenant, List.of()).stream()
        .map(
            r ->
                new Sent(
                    r.body(),
                    Protocol.V2.version().equals(r.header("X-Prometheus-Remote-Write-Version"))
                        ? Protocol.V2
                        : Protocol.V1,
                    retryAttempt(r)))
        .toList();
  }

  private static int retryAttempt(Received r) {
    String h = r.header("Retry-Attempt");
    return h == null ? 0 : Integer.parseInt(h);
  }
}
