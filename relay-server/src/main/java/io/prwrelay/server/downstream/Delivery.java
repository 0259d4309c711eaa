package io.prwrelay.server.downstream;

import io.netty.channel.EventLoop;
import io.prwrelay.server.config.DownstreamConfig;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * Delivers the tenant batches of sender requests through one {@link TenantSender}: at most {@code
 * maxConcurrent} batches of a request in flight, retriable failures retried with a {@link
 * RetryPolicy} until the request's deadline, every attempt bounded by the attempt timeout, and each
 * batch released exactly once at its final outcome. Shared by every request and event loop; the
 * state of one request lives in a {@link RequestDelivery}.
 *
 * <p>Time comes from the request's event loop ({@link EventLoop#ticker()}), so a test can move it.
 */
public final class Delivery {
  final TenantSender sender;
  final RetryPolicy retryPolicy;
  final long timeoutNanos;
  final long attemptTimeoutNanos;
  final int maxConcurrent;
  final DeliveryObserver observer;

  /**
   * @param timeout deadline of a whole sender request, from its start, retries included
   * @param attemptTimeout limit of one attempt (the remaining time to the deadline, if less)
   * @param maxConcurrent batches of one request in flight at once
   */
  public Delivery(
      TenantSender sender,
      RetryPolicy retryPolicy,
      Duration timeout,
      Duration attemptTimeout,
      int maxConcurrent,
      DeliveryObserver observer) {
    this.sender = sender;
    this.retryPolicy = retryPolicy;
    this.timeoutNanos = timeout.toNanos();
    this.attemptTimeoutNanos = attemptTimeout.toNanos();
    this.maxConcurrent = maxConcurrent;
    this.observer = observer;
  }

  /** A delivery with the deadlines, concurrency and backoff of {@code relay.downstream.*}. */
  public static Delivery of(
      DownstreamConfig config, TenantSender sender, DeliveryObserver observer) {
    return new Delivery(
        sender,
        new RetryPolicy(config.initialBackoff(), config.maxBackoff()),
        config.timeout(),
        config.attemptTimeout(),
        config.maxConcurrentSends(),
        observer);
  }

  /**
   * Delivers every batch of one sender request; must be called on {@code loop}.
   *
   * @param loop the request's event loop: every attempt, timer and callback runs on it, and its
   *     ticker is the clock
   * @param sends takes ownership of every batch
   * @param startNanos when the request started, on {@code loop}'s ticker; the deadline is this plus
   *     the timeout
   * @param done called once, on {@code loop}, with the final outcome of each batch, in the order of
   *     {@code sends}
   */
  public void deliver(
      EventLoop loop, List<TenantSend> sends, long startNanos, Consumer<List<TenantOutcome>> done) {
    new RequestDelivery(this, loop, sends, startNanos + timeoutNanos, done).start();
  }
}
