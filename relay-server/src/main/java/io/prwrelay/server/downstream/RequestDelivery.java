package io.prwrelay.server.downstream;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Delivers every tenant batch of one sender request: at most {@code maxConcurrent} in flight,
 * retriable failures retried with {@link RetryPolicy} until the request's deadline, each batch
 * released exactly once at its final outcome. Runs entirely on the request's event loop; retries
 * are scheduled there, never slept.
 */
public final class RequestDelivery {
  private final DownstreamClient client;
  private final RetryPolicy retryPolicy;
  private final EventLoop loop;
  private final List<TenantSend> sends;
  private final long deadlineNanos;
  private final long attemptTimeoutNanos;
  private final int maxConcurrent;
  private final DeliveryObserver observer;
  private final Consumer<SenderAnswer> done;
  private int next;
  private int active;
  private int finished;

  /**
   * @param sends takes ownership of every batch
   * @param deadlineNanos {@link System#nanoTime()} by which every batch must have its final outcome
   * @param done called once, on {@code loop}, with the answer for the sender
   */
  public RequestDelivery(
      DownstreamClient client,
      RetryPolicy retryPolicy,
      EventLoop loop,
      List<TenantSend> sends,
      long deadlineNanos,
      long attemptTimeoutNanos,
      int maxConcurrent,
      DeliveryObserver observer,
      Consumer<SenderAnswer> done) {
    this.client = client;
    this.retryPolicy = retryPolicy;
    this.loop = loop;
    this.sends = sends;
    this.deadlineNanos = deadlineNanos;
    this.attemptTimeoutNanos = attemptTimeoutNanos;
    this.maxConcurrent = maxConcurrent;
    this.observer = observer;
    this.done = done;
  }

  /** Starts sending; must be called on {@code loop}. */
  public void start() {
    if (sends.isEmpty()) {
      done.accept(SenderAnswer.of(sends));
      return;
    }
    while (active < maxConcurrent && next < sends.size()) {
      active++;
      attempt(sends.get(next++));
    }
  }

  private void attempt(TenantSend send) {
    long remaining = deadlineNanos - System.nanoTime();
    if (remaining <= 0) {
      if (send.last == null) {
        send.last =
            AttemptOutcome.transport("request deadline passed before the batch could be sent");
      }
      finish(send);
      return;
    }
    send.attempts++;
    long started = System.nanoTime();
    Future<AttemptOutcome> f =
        client.send(loop, send.tenant(), send.body(), Math.min(remaining, attemptTimeoutNanos));
    f.addListener(
        x -> {
          AttemptOutcome outcome = f.getNow();
          send.last = outcome;
          observer.attempt(send, outcome, System.nanoTime() - started);
          if (outcome.success() || !outcome.retriable()) {
            finish(send);
            return;
          }
          long delay = retryPolicy.delayNanos(send.attempts, outcome.retryAfterMillis());
          if (System.nanoTime() + delay >= deadlineNanos) {
            finish(send);
            return;
          }
          observer.retry(send, outcome, delay);
          loop.schedule(() -> attempt(send), delay, TimeUnit.NANOSECONDS);
        });
  }

  private void finish(TenantSend send) {
    send.done = true;
    send.release();
    observer.finished(send);
    finished++;
    active--;
    if (next < sends.size()) {
      active++;
      attempt(sends.get(next++));
    } else if (finished == sends.size()) {
      done.accept(SenderAnswer.of(sends));
    }
  }
}
