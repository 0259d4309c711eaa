package io.prwrelay.server.ingress;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.write.Answer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * What one connection read ahead of its answers (HTTP/1.1 pipelining), and whether it may read
 * more. The {@link IngressHandler} holds a message here while a write request is being delivered,
 * while the client does not read its answers, and while messages before it are held; {@link #next}
 * gives them back in order.
 *
 * <p>At most {@code max} requests are held. The one past the bound is held as an {@link Overflow}
 * (its content released), answered 503 in its turn ({@link #overflowAnswer}); everything after it
 * is released unread.
 *
 * <p>When an answer fills the connection's outbound buffer past its high water mark, the connection
 * is {@linkplain #block blocked}: nothing more is read or answered until the client has read enough
 * of it ({@link #unblock}), and a client that reads nothing within the read timeout is
 * disconnected. One per connection, on its event loop.
 */
final class Pipelining {
  /** Stands for the request past the bound, answered 503 in its turn. */
  record Overflow(HttpRequest head) {}

  private final int max;
  private final long notReadingNanos;
  private final RelayMetrics metrics;
  private final ArrayDeque<Object> held = new ArrayDeque<>();

  /** Requests in {@link #held}. */
  private int requests;

  /** The bound was passed: everything read from now on is released unread. */
  private boolean overflowed;

  /** The last answer filled the outbound buffer past its high water mark. */
  private boolean blocked;

  /** Closes a connection whose client has not read its answers within the read timeout. */
  private ScheduledFuture<?> notReadingTimeout;

  /**
   * @param max requests held at most
   * @param notReading how long a blocked client has to read its answers ({@code
   *     relay.server.read-timeout})
   */
  Pipelining(int max, Duration notReading, RelayMetrics metrics) {
    this.max = max;
    this.notReadingNanos = notReading.toNanos();
    this.metrics = metrics;
  }

  /** Whether a message read now must be held: the client is not reading, or others are held. */
  boolean holding() {
    return blocked || !held.isEmpty();
  }

  /**
   * Holds a message until the answers before it are written, within the bound.
   *
   * @param msg takes ownership
   */
  void hold(Object msg) {
    if (overflowed) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (msg instanceof HttpRequest req) {
      if (requests == max) {
        overflowed = true;
        ReferenceCountUtil.release(msg);
        held.add(new Overflow(req));
        return;
      }
      requests++;
    }
    held.add(msg);
  }

  /**
   * The next message held, or {@code null} when none is or the connection is blocked. The caller
   * owns it.
   */
  Object next() {
    if (blocked || held.isEmpty()) {
      return null;
    }
    Object msg = held.poll();
    if (msg instanceof HttpRequest) {
      requests--;
    }
    return msg;
  }

  /** The answer to the request past the bound: 503, and the connection closes. */
  Answer overflowAnswer() {
    return new Answer(
        503,
        "more than "
            + max
            + " requests sent ahead of their answers on one connection; this one and"
            + " those after it were not read: send them again",
        1,
        true);
  }

  /** Whether the client is not reading its answers. */
  boolean blocked() {
    return blocked;
  }

  /**
   * Stops reading while the client does not read its answers: the outbound buffer went past its
   * high water mark with the last answer. Reading resumes once it drains below the low mark; a
   * client that reads nothing within the timeout is disconnected.
   */
  void block(ChannelHandlerContext ctx) {
    if (blocked) {
      return;
    }
    blocked = true;
    ctx.channel().config().setAutoRead(false);
    notReadingTimeout =
        ctx.executor()
            .schedule(
                () -> {
                  if (blocked && ctx.channel().isActive()) {
                    metrics.connectionRejected("not_reading");
                    ctx.close();
                  }
                },
                notReadingNanos,
                TimeUnit.NANOSECONDS);
  }

  /**
   * Ends the block once the client has read enough of its answers.
   *
   * @return whether the connection was blocked and no longer is
   */
  boolean unblock(ChannelHandlerContext ctx) {
    if (!blocked || !ctx.channel().isWritable()) {
      return false;
    }
    blocked = false;
    notReadingTimeout.cancel(false);
    return true;
  }

  /** The connection closed: stops the timeout and releases every message held. */
  void close() {
    if (notReadingTimeout != null) {
      notReadingTimeout.cancel(false);
    }
    while (!held.isEmpty()) {
      ReferenceCountUtil.release(held.poll());
    }
  }
}
