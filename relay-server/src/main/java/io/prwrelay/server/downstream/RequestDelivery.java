package io.prwrelay.server.downstream;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The progress of one sender request's delivery (see {@link Delivery}): which batches are waiting,
 * in flight and finished. Runs entirely on the request's event loop; retries are scheduled there,
 * never slept.
 */
final class RequestDelivery {
  private final Delivery delivery;
  private final EventLoop loop;
  private final Ticker ticker;
  private final List<TenantSend> sends;
  private final long deadlineNanos;
  private final Consumer<List<TenantOutcome>> done;
  private int next;
  private int active;
  private int finished;

  /**
   * @param sends takes ownership of every batch
   * @param deadlineNanos time on {@code loop}'s ticker by which every batch has its final outcome
   */
  RequestDelivery(
      Delivery delivery,
      EventLoop loop,
      List<TenantSend> sends,
      long deadlineNanos,
      Consumer<List<TenantOutcome>> done) {
    this.delivery = delivery;
    this.loop = loop;
    this.ticker = loop.ticker();
    this.sends = sends;
    this.deadlineNanos = deadlineNanos;
    this.done = done;
  }

  void start() {
    if (sends.isEmpty()) {
      done.accept(List.of());
      return;
    }
    while (active < delivery.maxConcurrent && next < sends.size()) {
      active++;
      attempt(sends.get(next++));
    }
  }

  private void attempt(TenantSend send) {
    long started = ticker.nanoTime();
    long remaining = deadlineNanos - started;
    if (remaining <= 0) {
      if (send.last == null) {
        send.last =
            AttemptOutcome.transport("request deadline passed before the batch could be sent");
      }
      finish(send);
      return;
    }
    send.attempts++;
    Future<AttemptOutcome> f =
        delivery.sender.send(
            loop, send.tenant(), send.body(), Math.min(remaining, delivery.attemptTimeoutNanos));
    f.addListener(
        x -> {
          AttemptOutcome outcome = f.getNow();
          long now = ticker.nanoTime();
          send.last = outcome;
          delivery.observer.attempt(send, outcome, now - started);
          if (outcome.success() || !outcome.retriable()) {
            finish(send);
            return;
          }
          long delay = delivery.retryPolicy.delayNanos(send.attempts, outcome.retryAfterMillis());
          if (now + delay >= deadlineNanos) {
            finish(send);
            return;
          }
          delivery.observer.retry(send, outcome, delay);
          loop.schedule(() -> attempt(send), delay, TimeUnit.NANOSECONDS);
        });
  }

  private void finish(TenantSend send) {
    send.release();
    delivery.observer.finished(send);
    finished++;
    active--;
    if (next < sends.size()) {
      active++;
      attempt(sends.get(next++));
    } else if (finished == sends.size()) {
      List<TenantOutcome> outcomes = new ArrayList<>(sends.size());
      for (TenantSend s : sends) {
        outcomes.add(s.outcome());
      }
      done.accept(outcomes);
    }
  }
}
