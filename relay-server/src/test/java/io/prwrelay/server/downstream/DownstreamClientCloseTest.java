package io.prwrelay.server.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.Future;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.transport.Transport;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Closing the client while an attempt waits for the downstream's answer. */
class DownstreamClientCloseTest {
  @Test
  void closingCompletesAttemptsInFlightWithATransportFailure() throws Exception {
    EventLoopGroup group = Transport.group(2);
    try (ScriptedDownstream downstream = new ScriptedDownstream()) {
      downstream.rule("t", () -> Reply.slow(Duration.ofSeconds(30)));
      RelayConfig config =
          RelayConfig.load(null, Map.of("relay.downstream.url", downstream.url()), Map.of());
      DownstreamClient client =
          new DownstreamClient(
              config.downstream(),
              group,
              Transport.socketChannel(),
              PooledByteBufAllocator.DEFAULT);
      ByteBuf plain = PooledByteBufAllocator.DEFAULT.heapBuffer();
      plain.writeBytes(RawProto.series(RawProto.label("__name__", "m")));
      ByteBuf body = SnappyCodec.encode(plain, PooledByteBufAllocator.DEFAULT);
      plain.release();
      EventLoop loop = group.next();
      Future<AttemptOutcome> attempt =
          loop.submit(() -> client.send(loop, "t", body, TimeUnit.SECONDS.toNanos(30))).get();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (downstream.received().isEmpty()) {
        assertTrue(System.nanoTime() < deadline, "the request never reached the downstream");
        Thread.sleep(10);
      }

      client.close();

      assertTrue(attempt.isDone(), "the attempt in flight is completed by close()");
      assertEquals(AttemptOutcome.TRANSPORT_FAILURE, attempt.getNow().status());
      assertTrue(
          attempt.getNow().describe().contains("shutting down"), attempt.getNow().describe());
      body.release();
    } finally {
      group.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
  }
}
