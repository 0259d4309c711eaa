package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKeys.DELIVERY_MODE;
import static io.prwrelay.server.config.ConfigKeys.LANES_BATCH_MAX_BYTES;
import static io.prwrelay.server.config.ConfigKeys.LANES_IDLE_TIMEOUT;
import static io.prwrelay.server.config.ConfigKeys.LANES_LINGER;
import static io.prwrelay.server.config.ConfigKeys.LANES_MAX;
import static io.prwrelay.server.config.ConfigKeys.LANES_MAX_CONCURRENT_SENDS;
import static io.prwrelay.server.config.ConfigKeys.LANES_MAX_PENDING_BYTES;
import static io.prwrelay.server.config.ConfigKeys.LANES_NEW_PER_SENDER_BURST;
import static io.prwrelay.server.config.ConfigKeys.LANES_NEW_PER_SENDER_RATE;
import static io.prwrelay.server.config.ConfigKeys.LEDGER_MAX_ENTRIES;
import static io.prwrelay.server.config.ConfigKeys.LEDGER_TTL;
import static io.prwrelay.server.config.ConfigKeys.QUEUE_DIR;
import static io.prwrelay.server.config.ConfigKeys.QUEUE_DIRECT_TIMEOUT;
import static io.prwrelay.server.config.ConfigKeys.QUEUE_FULL_POLICY;
import static io.prwrelay.server.config.ConfigKeys.QUEUE_MAX_AGE;
import static io.prwrelay.server.config.ConfigKeys.QUEUE_MAX_BYTES;
import static io.prwrelay.server.config.ConfigKeys.QUEUE_MAX_NEW_TENANTS_PER_REQUEST;
import static io.prwrelay.server.config.ConfigKeys.QUEUE_MAX_NEW_TENANTS_PER_SECOND;
import static io.prwrelay.server.config.ConfigKeys.QUEUE_MAX_TENANT_BYTES;
import static io.prwrelay.server.config.ConfigKeys.QUEUE_SEGMENT_BYTES;
import static io.prwrelay.server.config.ConfigKeys.THROTTLED_POLICY;
import static io.prwrelay.server.config.ConfigKeys.THROTTLED_RETRIES;
import static io.prwrelay.server.config.ConfigKeys.THROTTLED_RETRY_TIME;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * How tenant batches travel ({@code relay.delivery.*} and {@code relay.lanes.*}): the delivery
 * mode, the on-disk queues of queue mode, the ledger that keeps a sender's retry from re-sending
 * tenants already delivered, and the bounds of each tenant's lane.
 *
 * @param queueDir directory of the per-tenant queues; {@code null} in sync mode
 * @param lanes the bounds and timing of every tenant lane
 */
public record DeliveryConfig(
    Mode mode,
    Path queueDir,
    Queue queue,
    int ledgerMaxEntries,
    Duration ledgerTtl,
    Throttled throttled,
    Lanes lanes) {

  /**
   * How a request body answered 429 again and again is answered ({@code
   * relay.delivery.throttled.*}).
   *
   * @param strict 429 for as long as the tenants are throttled; else 400 once {@code retries} 429s
   *     were answered to the body or its first 429 is older than {@code retryTime}
   */
  public record Throttled(boolean strict, int retries, Duration retryTime) {}

  /** The choices of {@code relay.delivery.throttled.policy}. */
  public enum ThrottledPolicy {
    DROP,
    STRICT;

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** The choices of {@code relay.delivery.queue.full-policy}. */
  public enum FullPolicy {
    /** 503 with Retry-After; nothing queued is dropped. */
    REFUSE,
    /** The tenant's own oldest records make room (counted). */
    DROP_OLDEST;

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  /** When a sender gets its 2xx. */
  public enum Mode {
    /** Once every tenant batch of the request was accepted downstream. */
    SYNC,
    /** Once every tenant batch was accepted downstream or fsync'd to its tenant's queue. */
    QUEUE;

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * Bounds of the on-disk queues.
   *
   * @param maxTenantBytes bytes one tenant may have queued
   * @param maxBytes bytes all tenants may have queued
   * @param maxAge age at which a queued record is dropped
   * @param segmentBytes size at which a queue file is rolled
   * @param directTimeout how long a caught-up tenant's batch may wait for its direct delivery
   *     before it goes to the queue; zero sends every batch through the queue
   * @param fullPolicy what a batch that would pass a byte bound does
   * @param maxNewTenantsPerRequest tenant queues one request may make on disk
   * @param maxNewTenantsPerSecond tenant queues all requests may make on disk a second
   */
  public record Queue(
      long maxTenantBytes,
      long maxBytes,
      Duration maxAge,
      long segmentBytes,
      Duration directTimeout,
      FullPolicy fullPolicy,
      int maxNewTenantsPerRequest,
      int maxNewTenantsPerSecond) {}

  /**
   * Bounds and timing of each tenant's lane.
   *
   * @param maxConcurrentSends downstream requests one tenant may have in flight
   * @param maxPendingBytes uncompressed bytes waiting in one lane
   * @param batchMaxBytes largest merged downstream request (uncompressed)
   * @param linger wait for more fragments before opening another concurrent send
   * @param idleTimeout an idle lane is forgotten after this long
   * @param max lanes at most
   * @param newPerSenderRate new lanes one sender may cause a second; 0 for no bound
   * @param newPerSenderBurst new lanes one sender may cause at once
   */
  public record Lanes(
      int maxConcurrentSends,
      long maxPendingBytes,
      int batchMaxBytes,
      Duration linger,
      Duration idleTimeout,
      int max,
      int newPerSenderRate,
      int newPerSenderBurst) {}

  static DeliveryConfig load(ConfigValues v) throws ConfigException {
    Mode mode = v.choice(DELIVERY_MODE, Mode.class);
    String dir = v.string(QUEUE_DIR);
    Path queueDir = null;
    if (mode == Mode.SYNC && !dir.isEmpty()) {
      v.warn(
          QUEUE_DIR,
          "is ignored: relay.delivery.mode=sync keeps nothing on disk (relay.delivery.mode=queue"
              + " uses it)");
    }
    if (mode == Mode.QUEUE) {
      if (dir.isEmpty()) {
        throw v.invalidWithoutValue(
            QUEUE_DIR, "must name a directory when relay.delivery.mode=queue");
      }
      queueDir = Path.of(dir);
      if (Files.exists(queueDir) && !Files.isDirectory(queueDir)) {
        throw v.invalid(QUEUE_DIR, "is not a directory");
      }
    }
    long maxTenantBytes = v.bytes(QUEUE_MAX_TENANT_BYTES, 1 << 20, Long.MAX_VALUE);
    long maxBytes = v.bytes(QUEUE_MAX_BYTES, 1 << 20, Long.MAX_VALUE);
    if (maxBytes < maxTenantBytes) {
      throw v.invalid(QUEUE_MAX_BYTES, "must not be less than " + QUEUE_MAX_TENANT_BYTES.name());
    }
    Duration maxAge = v.duration(QUEUE_MAX_AGE);
    long segmentBytes = v.bytes(QUEUE_SEGMENT_BYTES, 64 << 10, 1L << 30);
    Duration directTimeout = v.durationOrZero(QUEUE_DIRECT_TIMEOUT);
    FullPolicy fullPolicy = v.choice(QUEUE_FULL_POLICY, FullPolicy.class);
    int newPerRequest = v.integer(QUEUE_MAX_NEW_TENANTS_PER_REQUEST, 1, 100_000_000);
    int newPerSecond = v.integer(QUEUE_MAX_NEW_TENANTS_PER_SECOND, 1, 100_000_000);
    int ledgerMax = v.integer(LEDGER_MAX_ENTRIES, 0, 100_000_000);
    Duration ledgerTtl = v.duration(LEDGER_TTL);
    Throttled throttled =
        new Throttled(
            v.choice(THROTTLED_POLICY, ThrottledPolicy.class) == ThrottledPolicy.STRICT,
            v.integer(THROTTLED_RETRIES, 0, 1_000),
            v.duration(THROTTLED_RETRY_TIME));
    Lanes lanes =
        new Lanes(
            v.integer(LANES_MAX_CONCURRENT_SENDS, 1, 10_000),
            v.bytes(LANES_MAX_PENDING_BYTES, 1 << 10, Long.MAX_VALUE),
            (int) v.bytes(LANES_BATCH_MAX_BYTES, 1 << 10, Integer.MAX_VALUE - 8),
            v.duration(LANES_LINGER),
            v.duration(LANES_IDLE_TIMEOUT),
            v.integer(LANES_MAX, 1, 100_000_000),
            v.integer(LANES_NEW_PER_SENDER_RATE, 0, 100_000_000),
            v.integer(LANES_NEW_PER_SENDER_BURST, 1, 100_000_000));
    return new DeliveryConfig(
        mode,
        queueDir,
        new Queue(
            maxTenantBytes,
            maxBytes,
            maxAge,
            segmentBytes,
            directTimeout,
            fullPolicy,
            newPerRequest,
            newPerSecond),
        ledgerMax,
        ledgerTtl,
        throttled,
        lanes);
  }
}
