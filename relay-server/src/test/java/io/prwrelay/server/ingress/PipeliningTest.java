package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.write.Answer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a connection holds ahead of its answers: in order, within the bound (the request past it
 * stands for itself as an overflow, everything after is released unread), and nothing while the
 * client does not read its answers, which closes the connection after the read timeout.
 */
class PipeliningTest {
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(5);

  private final RelayMetrics metrics = new RelayMetrics(10, ByteBufAllocator.DEFAULT);
  private final SimulatedLoop sim = new SimulatedLoop(new ChannelInboundHandlerAdapter());
  private final ChannelHandlerContext ctx = sim.channel().pipeline().firstContext();
  private final Pipelining pipelining = new Pipelining(2, READ_TIMEOUT, metrics);

  @AfterEach
  void tearDown() {
    pipelining.close();
    assertFalse(sim.channel().finishAndReleaseAll());
  }

  private static HttpRequest request(String uri) {
    return new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, uri);
  }

  private static HttpContent content() {
    return new DefaultHttpContent(Unpooled.copiedBuffer(new byte[] {1, 2, 3}));
  }

  @Test
  void givesBackWhatItHeldInOrder() {
    HttpRequest first = request("/first");
    HttpContent body = content();
    HttpRequest second = request("/second");
    assertFalse(pipelining.holding());
    pipelining.hold(first);
    assertTrue(pipelining.holding(), "what comes after a held message waits too");
    pipelining.hold(body);
    pipelining.hold(second);
    assertSame(first, pipelining.next());
    assertSame(body, pipelining.next());
    body.release();
    assertSame(second, pipelining.next());
    assertNull(pipelining.next());
    assertFalse(pipelining.holding());
  }

  @Test
  void theRequestPastTheBoundIsAnsweredInItsTurnAndWhatFollowsIsReleasedUnread() {
    pipelining.hold(request("/1"));
    pipelining.hold(request("/2"));
    HttpContent after = content();
    pipelining.hold(request("/3"));
    pipelining.hold(after);
    assertEquals(0, after.refCnt(), "released unread, the overflowing request's own body too");
    pipelining.next();
    pipelining.next();
    Pipelining.Overflow overflow = assertInstanceOf(Pipelining.Overflow.class, pipelining.next());
    assertEquals("/3", overflow.head().uri());
    assertNull(pipelining.next(), "nothing after the overflow is kept");
    Answer a = pipelining.overflowAnswer();
    assertEquals(503, a.status());
    assertTrue(a.close());
    assertEquals(1, a.retryAfterSeconds());
    assertEquals(
        "more than 2 requests sent ahead of their answers on one connection; this one and those"
            + " after it were not read: send them again",
        a.message());
  }

  @Test
  void aClientThatDoesNotReadItsAnswersWithinTheReadTimeoutIsDisconnected() {
    pipelining.hold(request("/held"));
    pipelining.block(ctx);
    assertFalse(sim.channel().config().isAutoRead(), "reading stops");
    assertTrue(pipelining.holding());
    assertNull(pipelining.next(), "nothing is handled while blocked");
    sim.advance(READ_TIMEOUT.minusMillis(1));
    assertTrue(sim.channel().isActive());
    sim.advance(Duration.ofMillis(1));
    assertFalse(sim.channel().isActive(), "closed after the read timeout");
    assertTrue(
        metrics.scrape().contains("relay_connections_rejected_total{action=\"not_reading\"} 1.0"),
        metrics.scrape());
  }

  @Test
  void aClientThatReadsItsAnswersIsUnblockedAndKeptConnected() {
    HttpRequest held = request("/held");
    pipelining.hold(held);
    pipelining.block(ctx);
    assertTrue(pipelining.unblock(ctx), "the channel is writable again");
    assertFalse(pipelining.unblock(ctx), "only once");
    assertSame(held, pipelining.next());
    sim.advance(READ_TIMEOUT.plusSeconds(1));
    assertTrue(sim.channel().isActive(), "the timeout was stopped");
  }
}
