package io.prwrelay.server.isolation;

import io.prwrelay.server.isolation.IdRequests.Part;
import io.prwrelay.server.isolation.IdRequests.Request;
import io.prwrelay.server.isolation.SenderConnection.Answer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Senders that behave like one shard of a Prometheus 2.42 remote-write queue with {@code
 * retry_on_http_429: true}: a new batch every {@link #PERIOD}; a batch answered 429 or 5xx (or not
 * answered) is sent again, the same bytes, after a backoff that starts at 30 ms and doubles up to 5
 * s, or after the answer's {@code Retry-After} when it has one; the next batch waits until this one
 * is accepted. Every batch carries the same tenants.
 */
final class RetryingSenders {
  static final Duration PERIOD = Duration.ofMillis(100);
  static final Duration MIN_BACKOFF = Duration.ofMillis(30);
  static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

  /**
   * One batch and every answer to it.
   *
   * @param firstNanos when it was first sent
   */
  record Batch(Request request, long firstNanos, List<Answer> answers) {}

  /** What the senders did, and the clocks read when they started. */
  record Result(List<Batch> batches, List<String> failures, long startNanos, long startMillis) {
    int attempts() {
      return batches.stream().mapToInt(b -> b.answers().size()).sum();
    }
  }

  private final InetSocketAddress relay;
  private final int senders;
  private final List<Part> parts;
  private final ConcurrentLinkedQueue<Batch> batches = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
  private volatile long stopNanos;

  /**
   * @param parts the tenants of every batch
   */
  RetryingSenders(InetSocketAddress relay, int senders, List<Part> parts) {
    this.relay = relay;
    this.senders = senders;
    this.parts = parts;
  }

  /** Sends for {@code duration}; returns once every sender has had its last answer. */
  Result run(Duration duration) throws InterruptedException {
    long startMillis = System.currentTimeMillis();
    long startNanos = System.nanoTime();
    stopNanos = startNanos + duration.toNanos();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < senders; i++) {
      String name = "retrying-" + i;
      long first = startNanos + PERIOD.toNanos() * i / senders;
      Thread t = new Thread(() -> send(name, first), name);
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join(duration.plusSeconds(30).toMillis());
      if (t.isAlive()) {
        failures.add(t.getName() + " did not stop");
        t.interrupt();
      }
    }
    return new Result(List.copyOf(batches), List.copyOf(failures), startNanos, startMillis);
  }

  private boolean over() {
    return System.nanoTime() - stopNanos >= 0;
  }

  private void send(String name, long next) {
    IdRequests builder = new IdRequests(name.hashCode());
    LockSupport.parkNanos(next - System.nanoTime());
    try (SenderConnection connection = new SenderConnection(relay, "/api/v1/write", 30_000)) {
      for (long seq = 0; !over(); seq++) {
        Request request = builder.build(name + "." + seq, parts);
        long first = System.nanoTime();
        List<Answer> answers = new ArrayList<>();
        batches.add(new Batch(request, first, answers));
        long backoff = MIN_BACKOFF.toNanos();
        while (true) {
          Answer a;
          try {
            a = connection.post(request.snappy());
          } catch (IOException e) {
            failures.add(name + " batch " + request.id() + ": " + e);
            a = null;
          }
          if (a != null) {
            synchronized (answers) {
              answers.add(a);
            }
            if (a.ok() || (a.status() / 100 == 4 && a.status() != 429)) {
              break;
            }
          }
          if (over()) {
            return;
          }
          long wait = backoff;
          if (a != null && a.retryAfter() != null) {
            wait = TimeUnit.SECONDS.toNanos(Long.parseLong(a.retryAfter()));
          }
          LockSupport.parkNanos(Math.min(wait, stopNanos - System.nanoTime()));
          if (over()) {
            return;
          }
          backoff = Math.min(backoff * 2, MAX_BACKOFF.toNanos());
        }
        next = Pace.next(next, PERIOD);
      }
    }
  }
}
