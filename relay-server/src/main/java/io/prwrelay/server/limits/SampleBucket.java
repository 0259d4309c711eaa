package io.prwrelay.server.limits;

/**
 * One tenant's samples-per-second limit: a token bucket of {@code burst} samples refilled at {@code
 * rate} a second, taken from once per tenant batch, whole or not at all (as Cortex and Mimir's
 * ingestion rate limiter, a batch larger than the burst is refused every time). Thread-safe;
 * batches of one tenant from several event loops take in turn.
 */
final class SampleBucket {
  private long rate;
  private long burst;
  private double tokens;
  private long lastNanos;

  SampleBucket(long rate, long burst, long nowNanos) {
    this.rate = rate;
    this.burst = burst;
    this.tokens = burst;
    this.lastNanos = nowNanos;
  }

  /** Takes {@code samples} when the bucket holds that many; otherwise takes nothing. */
  synchronized boolean take(long samples, long nowNanos) {
    refill(nowNanos);
    if (samples > tokens) {
      return false;
    }
    tokens -= samples;
    return true;
  }

  /** Changes rate and burst, keeping the tokens (at most the new burst). */
  synchronized void limits(long rate, long burst, long nowNanos) {
    refill(nowNanos);
    this.rate = rate;
    this.burst = burst;
    tokens = Math.min(tokens, burst);
  }

  /** Whether the bucket is full: the tenant sent nothing for at least burst / rate seconds. */
  synchronized boolean idle(long nowNanos) {
    refill(nowNanos);
    return tokens >= burst;
  }

  synchronized long rate() {
    return rate;
  }

  synchronized long burst() {
    return burst;
  }

  private void refill(long nowNanos) {
    long elapsed = nowNanos - lastNanos;
    if (elapsed > 0) {
      tokens = Math.min(burst, tokens + elapsed * 1e-9 * rate);
      lastNanos = nowNanos;
    }
  }
}
