package io.prwrelay.server.downstream;

import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.prwrelay.server.downstream.ScriptedSender.Reply;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;

/**
 * The {@link TenantSender} contract of the lane tests' double, {@link ScriptedSender}, with one
 * connection, on a real event loop (the lane tests run it on a {@code SimulatedLoop}).
 */
class ScriptedSenderContractTest extends TenantSenderContractTest {
  private final EventLoop loop = new DefaultEventLoop();
  private final ScriptedSender sender = new ScriptedSender().connections(1);

  @AfterEach
  void stop() {
    loop.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
  }

  @Override
  void answer(String tenant, Answer... answers) {
    for (Answer a : answers) {
      Reply reply =
          a.retryAfterSeconds() >= 0
              ? new Reply(
                  new AttemptOutcome(a.status(), a.body(), a.retryAfterSeconds() * 1000L),
                  a.delay())
              : new Reply(new AttemptOutcome(a.status(), a.body(), -1), a.delay());
      sender.script(tenant, reply);
    }
  }

  @Override
  TenantSender sender() {
    return sender;
  }

  @Override
  EventLoop loop() {
    return loop;
  }

  @Override
  List<Sent> received(String tenant) {
    return sender.callsTo(tenant).stream()
        .map(c -> new Sent(c.body(), c.protocol(), c.retryAttempt()))
        .toList();
  }
}
