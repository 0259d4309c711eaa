package io.prwrelay.bench.load;

import io.netty.buffer.ByteBuf;
import java.util.concurrent.TimeUnit;

/**
 * One request as the sender means it: a body with its number, sent once and then re-sent with the
 * same bytes after each retriable answer (429 or 5xx) until it is accepted or the retries run out,
 * the way Prometheus's remote-write shard does with {@code retry_on_http_429}: it waits the
 * answer's {@code Retry-After} when there is one, else a backoff that starts at 30 ms and doubles
 * up to 5 s (Prometheus 2.42's {@code min_backoff} and {@code max_backoff}), and after a {@code
 * Retry-After} wait the backoff continues from twice that wait. Touched only by the event loop of
 * the connection that sends it.
 */
final class Write {
  static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(30);
  static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(5);

  final RequestPool.Body body;
  final long nonce;

  /** Attempts sent so far. */
  int attempts;

  /** Whether some attempt was answered 429 or 5xx by the relay. */
  boolean answeredRetriable;

  /** When the next attempt is due, once a retry is scheduled. */
  long dueNanos;

  private long backoffNanos = MIN_BACKOFF_NANOS;

  Write(RequestPool.Body body, long nonce) {
    this.body = body;
    this.nonce = nonce;
  }

  /** The request's body for one attempt; the caller owns it. */
  ByteBuf content() {
    return body.content(nonce);
  }

  /**
   * How long to wait before the next attempt after a retriable answer, and the backoff after it.
   *
   * @param retryAfterNanos the answer's {@code Retry-After}, or 0 when it had none
   */
  long nextDelay(long retryAfterNanos) {
    long sleep = retryAfterNanos > 0 ? retryAfterNanos : backoffNanos;
    backoffNanos = Math.min(sleep * 2, MAX_BACKOFF_NANOS);
    return sleep;
  }
}
