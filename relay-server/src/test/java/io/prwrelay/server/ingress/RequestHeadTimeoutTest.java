package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.metrics.RelayMetrics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A request head that is begun and not finished within {@code relay.server.read-timeout} gets 408;
 * a connection that is merely idle between requests, or a head finished in time, does not.
 */
class RequestHeadTimeoutTest {
  private SimulatedLoop sim;
  private EmbeddedChannel channel;
  private IngressFixture fixture;

  @BeforeEach
  void open() throws Exception {
    RelayConfig config =
        RelayConfig.load(null, Map.of("relay.server.read-timeout", "10s"), Map.of());
    fixture =
        IngressFixture.fullPipeline(
            config, new ScriptedSender(), new RelayMetrics(10, ByteBufAllocator.DEFAULT));
    sim = fixture.sim;
    channel = fixture.channel;
  }

  @AfterEach
  void close() {
    channel.close();
    fixture.lanes.close();
    sim.runDue();
    assertFalse(channel.finishAndReleaseAll(), "nothing left unread or unreleased");
  }

  private void send(String s) {
    channel.writeInbound(Unpooled.copiedBuffer(s, StandardCharsets.ISO_8859_1));
    sim.runDue();
  }

  private String answers() {
    StringBuilder out = new StringBuilder();
    for (Object o; (o = channel.readOutbound()) != null; ) {
      ByteBuf b = (ByteBuf) o;
      out.append(b.toString(StandardCharsets.ISO_8859_1));
      b.release();
    }
    return out.toString();
  }

  @Test
  void headNotFinishedWithinTheReadTimeoutGets408AndTheConnectionEnds() {
    send("POST /api/v1/write HTTP/1.1\r\nHost: relay\r\n");
    sim.advance(Duration.ofSeconds(9));
    send("X-Slow: a");
    assertEquals("", answers());
    sim.advance(Duration.ofSeconds(1));
    String out = answers();
    assertTrue(out.startsWith("HTTP/1.1 408 Request Timeout\r\n"), out);
    assertTrue(
        out.endsWith("request head not received within relay.server.read-timeout=PT10S\n"), out);
    assertTrue(out.contains("connection: close"), out);
  }

  @Test
  void idleConnectionAfterAnAnsweredRequestIsNotTimedOut() {
    send("GET /-/healthy HTTP/1.1\r\nHost: relay\r\n\r\n");
    assertTrue(answers().startsWith("HTTP/1.1 200 OK"));
    sim.advance(Duration.ofSeconds(60));
    assertEquals("", answers());
    assertTrue(channel.isActive());
  }

  @Test
  void headFinishedInTimeIsAnsweredAndNotTimedOutLater() {
    send("GET /-/healthy HTTP/1.1\r\n");
    sim.advance(Duration.ofSeconds(8));
    send("Host: relay\r\n\r\n");
    assertTrue(answers().startsWith("HTTP/1.1 200 OK"));
    sim.advance(Duration.ofSeconds(30));
    assertEquals("", answers());
    assertTrue(channel.isActive());
  }
}
