package io.prwrelay.server.downstream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.testing.RawProto;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What every {@link TenantSender} does, as the lanes rely on it: run against the real client over a
 * real in-process downstream ({@link DownstreamClientContractTest}) and against the test double the
 * lane tests use ({@link ScriptedSenderContractTest}), so that the double behaves as the client
 * does. Each test scripts the downstream's answers to a tenant, sends from the sender's event loop
 * as a lane does, and checks the outcome, when and where it completed, and what arrived.
 */
abstract class TenantSenderContractTest {
  /** How long an attempt may take in these tests: long for a loaded machine, short to wait for. */
  static final Duration TIMEOUT = Duration.ofMillis(1500);

  /** One answer of the downstream to one attempt. */
  record Answer(int status, String body, int retryAfterSeconds, Duration delay) {
    static Answer status(int status, String body) {
      return new Answer(status, body, -1, Duration.ZERO);
    }

    static Answer retryAfter(int status, int seconds) {
      return new Answer(status, "slow down", seconds, Duration.ZERO);
    }

    /** 200 after {@code delay}. */
    static Answer after(Duration delay) {
      return new Answer(200, "", -1, delay);
    }

    /** No answer before the attempt's timeout. */
    static Answer silence() {
      return after(TIMEOUT.multipliedBy(20));
    }
  }

  /** One attempt as the downstream received it. */
  record Sent(byte[] body, Protocol protocol, int retryAttempt) {}

  /** Makes the downstream answer {@code tenant}'s next attempts so, in order. */
  abstract void answer(String tenant, Answer... answers);

  /** The sender under test, made after the answers are scripted. */
  abstract TenantSender sender() throws Exception;

  /** An event loop the sender serves. */
  abstract EventLoop loop();

  /** The attempts {@code tenant}'s downstream received, in order. */
  abstract List<Sent> received(String tenant);

  /** What one attempt ended with, when, and whether its future completed on the loop. */
  record Result(AttemptOutcome outcome, long elapsedNanos, boolean onLoop, int bodyRefCnt) {}

  private static ByteBuf body(String name) {
    ByteBuf plain = PooledByteBufAllocator.DEFAULT.heapBuffer();
    plain.writeBytes(RawProto.series(RawProto.label("__name__", name), RawProto.sample(1, 1)));
    ByteBuf compressed = SnappyCodec.encode(plain, PooledByteBufAllocator.DEFAULT);
    plain.release();
    return compressed;
  }

  /**
   * Sends {@code count} attempts to {@code tenant} at once from the loop; their results in order.
   */
  private List<Result> send(TenantSender sender, String tenant, int count, Protocol protocol)
      throws Exception {
    EventLoop loop = loop();
    List<CompletableFuture<Result>> results = new ArrayList<>();
    List<ByteBuf> bodies = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      bodies.add(body("m" + i));
      results.add(new CompletableFuture<>());
    }
    loop.execute(
        () -> {
          long start = loop.ticker().nanoTime();
          for (int i = 0; i < count; i++) {
            ByteBuf body = bodies.get(i);
            CompletableFuture<Result> result = results.get(i);
            Future<AttemptOutcome> f =
                sender.send(loop, tenant, protocol, i, body, TIMEOUT.toNanos());
            f.addListener(
                done ->
                    result.complete(
                        new Result(
                            f.isSuccess() ? f.getNow() : null,
                            loop.ticker().nanoTime() - start,
                            loop.inEventLoop(),
                            body.refCnt())));
          }
        });
    List<Result> out = new ArrayList<>();
    for (CompletableFuture<Result> r : results) {
      out.add(r.get(30, TimeUnit.SECONDS));
    }
    for (ByteBuf b : bodies) {
      assertEquals(1, b.refCnt(), "the caller's body, borrowed and not released by the sender");
      b.release();
    }
    return out;
  }

  private Result sendOne(String tenant, Answer answer) throws Exception {
    answer(tenant, answer);
    return send(sender(), tenant, 1, Protocol.V1).get(0);
  }

  @Test
  void anAcceptedAttemptIsItsStatusOnTheCallersLoopAndTheBodyArrivesAsSent() throws Exception {
    Result r = sendOne("a", Answer.status(200, ""));
    assertEquals(200, r.outcome().status());
    assertTrue(r.outcome().success());
    assertTrue(r.onLoop(), "completed on the caller's loop");
    assertEquals(1, r.bodyRefCnt(), "the body is the caller's when the future completes");
    List<Sent> sent = received("a");
    assertEquals(1, sent.size());
    assertArrayEquals(
        RawProto.series(RawProto.label("__name__", "m0"), RawProto.sample(1, 1)), sent.get(0).body);
  }

  @Test
  void aRejectionCarriesTheDownstreamsStatusAndMessage() throws Exception {
    Result r = sendOne("a", Answer.status(400, "per-user series limit of 3 exceeded"));
    assertEquals(400, r.outcome().status());
    assertTrue(r.outcome().message().contains("per-user series limit of 3 exceeded"));
    assertFalse(r.outcome().retriable());
    assertTrue(r.outcome().overTenantLimit());
    assertEquals(-1, r.outcome().retryAfterMillis());
  }

  @Test
  void aThrottleCarriesItsRetryAfterInMilliseconds() throws Exception {
    Result r = sendOne("a", Answer.retryAfter(429, 7));
    assertEquals(429, r.outcome().status());
    assertEquals(7000, r.outcome().retryAfterMillis());
    assertTrue(r.outcome().retriable());
  }

  @Test
  void aServerErrorIsItsStatus() throws Exception {
    Result r = sendOne("a", Answer.status(503, "unavailable"));
    assertEquals(503, r.outcome().status());
    assertTrue(r.outcome().retriable());
  }

  @Test
  void noAnswerWithinTheTimeoutIsATransportFailureAtTheTimeoutNeverAFailedFuture()
      throws Exception {
    Result r = sendOne("a", Answer.silence());
    assertEquals(AttemptOutcome.TRANSPORT_FAILURE, r.outcome().status(), "a completed future");
    assertEquals("no response within " + TIMEOUT.toMillis() + " ms", r.outcome().message());
    assertTrue(r.elapsedNanos() >= TIMEOUT.toNanos(), "not before the timeout");
    assertTrue(r.onLoop());
    assertEquals(1, r.bodyRefCnt());
  }

  @Test
  void theProtocolAndTheRetryAttemptReachTheDownstream() throws Exception {
    answer("a", Answer.status(200, ""), Answer.status(200, ""));
    TenantSender sender = sender();
    send(sender, "a", 1, Protocol.V1);
    send(sender, "a", 1, Protocol.V2);
    List<Sent> sent = received("a");
    assertEquals(List.of(Protocol.V1, Protocol.V2), sent.stream().map(Sent::protocol).toList());
    assertEquals(List.of(0, 0), sent.stream().map(Sent::retryAttempt).toList());
    answer("b", Answer.status(200, ""), Answer.status(200, ""));
    send(sender, "b", 2, Protocol.V1);
    assertEquals(List.of(0, 1), received("b").stream().map(Sent::retryAttempt).toList());
  }

  /**
   * The loop has one connection: the second attempt waits for it, and its timeout counts from the
   * call, so a wait as long as the timeout ends it.
   */
  @Test
  void anAttemptBeyondTheLoopsConnectionsWaitsForOne() throws Exception {
    Duration slow = TIMEOUT.dividedBy(3);
    answer("a", Answer.after(slow), Answer.after(slow));
    TenantSender sender = sender();
    assertEquals(1, sender.connections(loop()));
    List<Result> r = send(sender, "a", 2, Protocol.V1);
    assertEquals(200, r.get(0).outcome().status());
    assertEquals(200, r.get(1).outcome().status());
    assertTrue(
        r.get(1).elapsedNanos() >= 2 * slow.toNanos(),
        "the second waited for the first: " + r.get(1).elapsedNanos() / 1_000_000 + " ms");
  }
}
