package io.prwrelay.server.lane;

import io.prwrelay.server.config.DeliveryConfig;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * How many new tenant lanes each sender may cause: a token bucket per sender of {@code
 * relay.lanes.new-per-sender-burst} tokens, refilled at {@code relay.lanes.new-per-sender-rate} a
 * second. A tenant batch whose tenant has no lane takes a token from its sender's bucket before the
 * lane is made; without one it is answered 503 with {@code Retry-After} (the time until a token is
 * back) and counted, and its lane is not made. Tenants that have a lane, and every other sender,
 * are not touched: a sender that sends thousands of new tenants a second pays for the lanes,
 * downstream requests and evictions that costs with its own answers, not with the other senders'.
 *
 * <p>The sender is what {@link Fragment#sender()} names: the client's address together with the
 * credential that authenticated the request when inbound auth is on. A batch without one (a queue's
 * records after a restart, a failure handed back to its lane) is never charged.
 *
 * <p><b>Bound:</b> at most {@link #MAX_SENDERS} buckets (about 150 bytes each with its map entry
 * and key: 1.5 MB). A bucket that has refilled is the same as none and is dropped when room is
 * needed; while every bucket is still refilling, senders beyond the bound share one bucket. Keys
 * are addresses or credentials the relay holds anyway, never bytes a client chose. Thread-safe: the
 * lanes of every loop take from it.
 */
public final class NewLaneBudget {
  /** Senders with a bucket of their own at most. */
  public static final int MAX_SENDERS = 10_000;

  /** No bound: every sender may make every lane it needs ({@code rate} 0). */
  public static final NewLaneBudget UNLIMITED = new NewLaneBudget(0, 0);

  private final double perNano;
  private final int burst;
  private final Map<Object, Bucket> buckets = new ConcurrentHashMap<>();
  private final Bucket shared;
  private final LongAdder refused = new LongAdder();

  /**
   * @param perSecond new lanes a sender may cause a second, sustained; 0 for no bound
   * @param burst new lanes a sender may cause at once, after a quiet spell
   */
  public NewLaneBudget(double perSecond, int burst) {
    this.perNano = perSecond / TimeUnit.SECONDS.toNanos(1);
    this.burst = burst;
    this.shared = new Bucket(burst, Long.MIN_VALUE);
  }

  /** Whether any sender may be refused. */
  public boolean bounded() {
    return perNano > 0;
  }

  /**
   * Takes a token of {@code sender}'s bucket for a new lane.
   *
   * @param sender the sender's identity, or {@code null} (never charged)
   * @param now ticker time
   * @return 0 when the lane may be made, else the nanoseconds until the sender has a token again
   */
  long take(Object sender, long now) {
    if (perNano <= 0 || sender == null) {
      return 0;
    }
    Bucket b = buckets.get(sender);
    if (b == null) {
      b = bucketFor(sender, now);
    }
    long wait = b.take(now, perNano, burst);
    if (wait > 0) {
      refused.increment();
    }
    return wait;
  }

  private Bucket bucketFor(Object sender, long now) {
    if (buckets.size() >= MAX_SENDERS) {
      dropRefilled(now);
      if (buckets.size() >= MAX_SENDERS) {
        return shared;
      }
    }
    return buckets.computeIfAbsent(sender, s -> new Bucket(burst, now));
  }

  /** Drops the buckets that are full again: their senders start afresh, as a new one would. */
  private synchronized void dropRefilled(long now) {
    for (Iterator<Bucket> it = buckets.values().iterator(); it.hasNext(); ) {
      if (it.next().full(now, perNano, burst)) {
        it.remove();
      }
    }
  }

  /** The outcome of a batch refused for {@code waitNanos}: 503, retry when a token is back. */
  FragmentOutcome refusal(long waitNanos) {
    long millis = Math.max(1, (waitNanos + 999_999) / 1_000_000);
    return FragmentOutcome.tooManyNewTenants(describe(), millis);
  }

  /** The keys in force, as messages quote them. */
  public String describe() {
    return DeliveryConfig.LANES_NEW_PER_SENDER_RATE.setTo(formatRate())
        + ", "
        + DeliveryConfig.LANES_NEW_PER_SENDER_BURST.setTo(burst);
  }

  private String formatRate() {
    double perSecond = perNano * TimeUnit.SECONDS.toNanos(1);
    return perSecond == Math.rint(perSecond)
        ? Long.toString((long) perSecond)
        : Double.toString(perSecond);
  }

  /** Tenant batches refused so far: their sender had no token for a new lane. */
  public long refused() {
    return refused.sum();
  }

  /** Senders with a bucket of their own now. */
  public int senders() {
    return buckets.size();
  }

  /** One sender's tokens, refilled lazily when taken from. */
  private static final class Bucket {
    private double tokens;
    private long last;

    Bucket(double tokens, long now) {
      this.tokens = tokens;
      this.last = now;
    }

    synchronized long take(long now, double perNano, int burst) {
      refill(now, perNano, burst);
      if (tokens >= 1) {
        tokens -= 1;
        return 0;
      }
      return (long) Math.ceil((1 - tokens) / perNano);
    }

    synchronized boolean full(long now, double perNano, int burst) {
      refill(now, perNano, burst);
      return tokens >= burst;
    }

    private void refill(long now, double perNano, int burst) {
      if (last == Long.MIN_VALUE) {
        last = now;
      }
      // Loops' tickers may differ by a little: time never runs backwards for a bucket.
      if (now > last) {
        tokens = Math.min(burst, tokens + (now - last) * perNano);
        last = now;
      }
    }
  }
}
