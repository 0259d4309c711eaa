package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * How tenant batches travel ({@code relay.delivery.*} and {@code relay.lanes.*}): the delivery
 * mode, the on-disk queues of queue mode, the ledger that keeps a sender's retry from re-sending
 * tenants already delivered, and the bounds of each tenant's lane.
 *
 * <p>Declares the keys it reads, the lanes' ({@code LANES_*}) among them.
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

  public static final ConfigKey MODE =
      key(
          "relay.delivery.mode",
          "sync",
          "sync: answer once every tenant's batch is delivered; queue: once it is delivered or"
              + " fsync'd to the tenant's on-disk queue");

  public static final ConfigKey QUEUE_DIR =
      key(
          "relay.delivery.queue.dir",
          "",
          "directory of the per-tenant queues (required in queue mode; created if missing)");

  public static final ConfigKey QUEUE_MAX_TENANT_BYTES =
      key(
          "relay.delivery.queue.max-tenant-bytes",
          "1GiB",
          "queued bytes per tenant; a batch that would pass it is answered 503 (or, with"
              + " full-policy drop-oldest, the tenant's oldest records make room)");

  public static final ConfigKey QUEUE_MAX_BYTES =
      key(
          "relay.delivery.queue.max-bytes",
          "8GiB",
          "queued bytes of all tenants; a batch that would pass it is answered 503 (or, with"
              + " full-policy drop-oldest, its tenant's own oldest records make room; never another"
              + " tenant's)");

  public static final ConfigKey QUEUE_FULL_POLICY =
      key(
          "relay.delivery.queue.full-policy",
          "refuse",
          "a batch that would pass max-tenant-bytes or max-bytes: refuse = 503 with Retry-After,"
              + " nothing queued is dropped; drop-oldest = its tenant's own oldest queued records"
              + " are dropped to make room (counted; they were answered 2xx), 503 when its own"
              + " records cannot make enough");

  public static final ConfigKey QUEUE_MAX_NEW_TENANTS_PER_REQUEST =
      key(
          "relay.delivery.queue.max-new-tenants-per-request",
          "100",
          "tenant queues one request may make on disk (tenants whose queue is not on disk nor"
              + " made since their lane was); its further new tenants are answered 503 with"
              + " Retry-After");

  public static final ConfigKey QUEUE_MAX_NEW_TENANTS_PER_SECOND =
      key(
          "relay.delivery.queue.max-new-tenants-per-second",
          "500",
          "tenant queues all requests together may make on disk a second (a burst of as many at"
              + " once); further new tenants are answered 503 with Retry-After");

  public static final ConfigKey QUEUE_MAX_AGE =
      key(
          "relay.delivery.queue.max-age",
          "6h",
          "queued records older than this are dropped (counted)");

  public static final ConfigKey QUEUE_SEGMENT_BYTES =
      key(
          "relay.delivery.queue.segment-bytes",
          "16MiB",
          "size at which a tenant's queue file is rolled; fully delivered files are deleted");

  public static final ConfigKey QUEUE_DIRECT_TIMEOUT =
      key(
          "relay.delivery.queue.direct-timeout",
          "100ms",
          "queue mode: a caught-up tenant's batch is sent directly and answered when delivered;"
              + " without a 2xx within this time it goes to the queue (0 = always through the"
              + " queue)");

  public static final ConfigKey LEDGER_MAX_ENTRIES =
      key(
          "relay.delivery.ledger.max-entries",
          "100000",
          "tenant names the ledger keeps over all retried bodies (per body the shorter of its"
              + " delivered and its other tenants), so a sender's retry re-sends only the tenants"
              + " not delivered (0 = off)");

  public static final ConfigKey LEDGER_TTL =
      key(
          "relay.delivery.ledger.ttl",
          "10m",
          "how long the ledger remembers a delivered tenant of a failed request");

  public static final ConfigKey THROTTLED_POLICY =
      key(
          "relay.delivery.throttled.policy",
          "drop",
          "a request whose only failures are tenants over their downstream limit (429): drop ="
              + " answer 429 to it at most relay.delivery.throttled.retries times, then 400 naming"
              + " those tenants, so that a sender that retries 429 forever (vmagent, Alloy) moves on"
              + " and its other tenants stay fresh; strict = 429 for as long as they are throttled");

  public static final ConfigKey THROTTLED_RETRIES =
      key(
          "relay.delivery.throttled.retries",
          "1",
          "under policy drop: 429 answers to the same request body before it is answered 400");

  public static final ConfigKey THROTTLED_RETRY_TIME =
      key(
          "relay.delivery.throttled.retry-time",
          "5s",
          "under policy drop: a body first answered 429 longer ago than this is answered 400 at"
              + " its next throttled attempt, however few its 429s");

  public static final ConfigKey LANES_MAX_CONCURRENT_SENDS =
      key(
          "relay.lanes.max-concurrent-sends",
          "4",
          "downstream requests one tenant may have in flight at once from its lane, and as many again"
              + " from each other event loop that sends its large batches (its share of the"
              + " connections)");

  public static final ConfigKey LANES_MAX_PENDING_BYTES =
      key(
          "relay.lanes.max-pending-bytes",
          "64MiB",
          "uncompressed bytes that may wait in one tenant's lane (sync mode); more gets 503");

  public static final ConfigKey LANES_BATCH_MAX_BYTES =
      key(
          "relay.lanes.batch-max-bytes",
          "8MiB",
          "largest downstream request made by merging a tenant's waiting fragments (uncompressed)");

  public static final ConfigKey LANES_LINGER =
      key(
          "relay.lanes.linger",
          "5ms",
          "how long a tenant with a request in flight waits for more fragments before opening another");

  public static final ConfigKey LANES_IDLE_TIMEOUT =
      key(
          "relay.lanes.idle-timeout",
          "5m",
          "a tenant's lane with nothing to do and no backoff in force is forgotten after this long");

  public static final ConfigKey LANES_MAX =
      key(
          "relay.lanes.max",
          "100000",
          "tenant lanes at most; a new tenant when all are busy gets 503");

  public static final ConfigKey LANES_NEW_PER_SENDER_RATE =
      key(
          "relay.lanes.new-per-sender-rate",
          "100",
          "new tenant lanes one sender (its credential with inbound auth, else its address) may"
              + " cause a second once its burst is spent; its batches for further new tenants get"
              + " 503 with Retry-After; 0 = no bound");

  public static final ConfigKey LANES_NEW_PER_SENDER_BURST =
      key(
          "relay.lanes.new-per-sender-burst",
          "10000",
          "new tenant lanes one sender may cause at once after a quiet spell (a restart of a sender"
              + " of many tenants)");

  /** The keys of this section, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS =
      List.of(
          MODE,
          QUEUE_DIR,
          QUEUE_MAX_TENANT_BYTES,
          QUEUE_MAX_BYTES,
          QUEUE_FULL_POLICY,
          QUEUE_MAX_NEW_TENANTS_PER_REQUEST,
          QUEUE_MAX_NEW_TENANTS_PER_SECOND,
          QUEUE_MAX_AGE,
          QUEUE_SEGMENT_BYTES,
          QUEUE_DIRECT_TIMEOUT,
          LEDGER_MAX_ENTRIES,
          LEDGER_TTL,
          THROTTLED_POLICY,
          THROTTLED_RETRIES,
          THROTTLED_RETRY_TIME,
          LANES_MAX_CONCURRENT_SENDS,
          LANES_MAX_PENDING_BYTES,
          LANES_BATCH_MAX_BYTES,
          LANES_LINGER,
          LANES_IDLE_TIMEOUT,
          LANES_MAX,
          LANES_NEW_PER_SENDER_RATE,
          LANES_NEW_PER_SENDER_BURST);

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
    Mode mode = v.choice(MODE, Mode.class);
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
