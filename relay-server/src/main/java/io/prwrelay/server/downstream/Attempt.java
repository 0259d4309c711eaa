package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.util.concurrent.DefaultPromise;
import io.prwrelay.server.protocol.Protocol;
import java.util.concurrent.TimeUnit;

/**
 * One downstream attempt and its result: the future {@link DownstreamClient#send} returns is the
 * attempt itself. It waits for a connection of its loop's {@link LoopConnections}, writes the
 * request head and the body there, and completes exactly once, on the loop: with the response, with
 * a transport failure, or when its deadline passes.
 */
final class Attempt extends DefaultPromise<AttemptOutcome> {
  final LoopConnections connections;
  private final String tenant;
  private final Protocol protocol;
  private final int retryAttempt;

  /** Borrowed from the caller until this attempt completes. */
  private final ByteBuf body;

  private final long timeoutNanos;
  final long deadlineNanos;

  /** Position in {@link LoopConnections}' list of attempts not completed yet. */
  int index = -1;

  /** The connection while the request is on it, else {@code null}. */
  private ResponseHandler connection;

  /**
   * @param retryAttempt earlier sends of the batch, sent as {@code Retry-Attempt} when above 0
   * @param body borrows the request body until this attempt completes
   */
  Attempt(
      LoopConnections connections,
      String tenant,
      Protocol protocol,
      int retryAttempt,
      ByteBuf body,
      long timeoutNanos,
      long now) {
    super(connections.loop);
    this.connections = connections;
    this.tenant = tenant;
    this.protocol = protocol;
    this.retryAttempt = retryAttempt;
    this.body = body;
    this.timeoutNanos = timeoutNanos;
    this.deadlineNanos = now + timeoutNanos;
  }

  /**
   * Writes the request on {@code connection}, which is this attempt's until it completes: the head,
   * then a retained duplicate of the body, in one flush.
   */
  void start(ResponseHandler connection) {
    this.connection = connection;
    connection.begin(this);
    Channel ch = connection.channel();
    ch.write(
        connections.head.encode(ch.alloc(), tenant, protocol, retryAttempt, body.readableBytes()),
        connection.quietWrite());
    ch.writeAndFlush(body.retainedDuplicate(), connection.failingWrite());
  }

  /** Completes with a response; the connection goes back to the pool or is closed. */
  void complete(AttemptOutcome outcome, boolean keepAlive) {
    finish(outcome, keepAlive);
  }

  /** Completes with a transport failure; the connection, if any, is closed. */
  void fail(String message) {
    finish(AttemptOutcome.transport(message), false);
  }

  /** Completes with a transport failure when the deadline has passed at {@code now}. */
  boolean expireAt(long now) {
    if (deadlineNanos - now > 0) {
      return false;
    }
    fail("no response within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
    return true;
  }

  /** Completes once: returns (or closes) the connection, then tells the caller. */
  private void finish(AttemptOutcome outcome, boolean reuseConnection) {
    if (isDone()) {
      return;
    }
    ResponseHandler c = connection;
    connection = null;
    connections.finished(this, c, reuseConnection);
    setSuccess(outcome);
  }
}
