package io.prwrelay.server.downstream;

import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * Exponential backoff with jitter, honouring {@code Retry-After}: attempt {@code n} (from 1) waits
 * a random time between half and all of {@code min(max, initial * 2^(n-1))}, or longer when the
 * downstream asked for it. Retries stop at the request's deadline.
 */
public final class RetryPolicy {
  private final long initialNanos;
  private final long maxNanos;
  private final Supplier<RandomGenerator> random;

  public RetryPolicy(Duration initial, Duration max) {
    this(initial, max, ThreadLocalRandom::current);
  }

  /**
   * @param random source of the jitter, asked on the thread that computes a delay
   */
  public RetryPolicy(Duration initial, Duration max, Supplier<RandomGenerator> random) {
    this.initialNanos = initial.toNanos();
    this.maxNanos = max.toNanos();
    this.random = random;
  }

  /**
   * Delay before retry number {@code retry} (1 for the first retry).
   *
   * @param retryAfterMillis what the downstream asked for, or -1
   */
  public long delayNanos(int retry, long retryAfterMillis) {
    long base = initialNanos;
    for (int i = 1; i < retry && base < maxNanos; i++) {
      base *= 2;
    }
    base = Math.min(base, maxNanos);
    long half = base / 2;
    long delay = half + random.get().nextLong(half + 1);
    if (retryAfterMillis >= 0) {
      delay = Math.max(delay, Duration.ofMillis(retryAfterMillis).toNanos());
    }
    return delay;
  }

  /**
   * Parses a {@code Retry-After} value: delta-seconds or an HTTP date.
   *
   * @return milliseconds to wait (0 for a date in the past), or -1 when absent or unparseable
   */
  public static long parseRetryAfter(String value, long nowMillis) {
    if (value == null || value.isBlank()) {
      return -1;
    }
    String v = value.trim();
    try {
      long seconds = Long.parseLong(v);
      return seconds < 0 ? -1 : Math.min(seconds, 86_400) * 1000;
    } catch (NumberFormatException notSeconds) {
      try {
        long at =
            ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
        return Math.max(0, Math.min(at - nowMillis, 86_400_000L));
      } catch (DateTimeParseException notDate) {
        return -1;
      }
    }
  }
}
