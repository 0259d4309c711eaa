package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import java.util.List;

/**
 * The keys of delivery ({@code relay.delivery.*}): when a sender gets its answer (sync or queue
 * mode), the on-disk queue's directory and bounds, the ledger of tenants already delivered for a
 * retried body, and how long a throttled tenant may hold a request back.
 *
 * <p>One group of the catalogue: {@link ConfigKeys} names each of these keys and lists them, in the
 * order of {@link #KEYS}, for {@code --help}, docs/configuration.md and the loaders.
 */
final class DeliveryKeys {
  private DeliveryKeys() {}

  static final ConfigKey MODE =
      key(
          "relay.delivery.mode",
          "sync",
          "sync: answer once every tenant's batch is delivered; queue: once it is delivered or"
              + " fsync'd to the tenant's on-disk queue");

  static final ConfigKey QUEUE_DIR =
      key(
          "relay.delivery.queue.dir",
          "",
          "directory of the per-tenant queues (required in queue mode; created if missing)");

  static final ConfigKey QUEUE_MAX_TENANT_BYTES =
      key(
          "relay.delivery.queue.max-tenant-bytes",
          "1GiB",
          "queued bytes per tenant; a batch that would pass it is answered 503 (or, with"
              + " full-policy drop-oldest, the tenant's oldest records make room)");

  static final ConfigKey QUEUE_MAX_BYTES =
      key(
          "relay.delivery.queue.max-bytes",
          "8GiB",
          "queued bytes of all tenants; a batch that would pass it is answered 503 (or, with"
              + " full-policy drop-oldest, its tenant's own oldest records make room; never another"
              + " tenant's)");

  static final ConfigKey QUEUE_FULL_POLICY =
      key(
          "relay.delivery.queue.full-policy",
          "refuse",
          "a batch that would pass max-tenant-bytes or max-bytes: refuse = 503 with Retry-After,"
              + " nothing queued is dropped; drop-oldest = its tenant's own oldest queued records"
              + " are dropped to make room (counted; they were answered 2xx), 503 when its own"
              + " records cannot make enough");

  static final ConfigKey QUEUE_MAX_NEW_TENANTS_PER_REQUEST =
      key(
          "relay.delivery.queue.max-new-tenants-per-request",
          "100",
          "tenant queues one request may make on disk (tenants whose queue is not on disk nor"
              + " made since their lane was); its further new tenants are answered 503 with"
              + " Retry-After");

  static final ConfigKey QUEUE_MAX_NEW_TENANTS_PER_SECOND =
      key(
          "relay.delivery.queue.max-new-tenants-per-second",
          "500",
          "tenant queues all requests together may make on disk a second (a burst of as many at"
              + " once); further new tenants are answered 503 with Retry-After");

  static final ConfigKey QUEUE_MAX_AGE =
      key(
          "relay.delivery.queue.max-age",
          "6h",
          "queued records older than this are dropped (counted)");

  static final ConfigKey QUEUE_SEGMENT_BYTES =
      key(
          "relay.delivery.queue.segment-bytes",
          "16MiB",
          "size at which a tenant's queue file is rolled; fully delivered files are deleted");

  static final ConfigKey QUEUE_DIRECT_TIMEOUT =
      key(
          "relay.delivery.queue.direct-timeout",
          "100ms",
          "queue mode: a caught-up tenant's batch is sent directly and answered when delivered;"
              + " without a 2xx within this time it goes to the queue (0 = always through the"
              + " queue)");

  static final ConfigKey LEDGER_MAX_ENTRIES =
      key(
          "relay.delivery.ledger.max-entries",
          "100000",
          "tenant names the ledger keeps over all retried bodies (per body the shorter of its"
              + " delivered and its other tenants), so a sender's retry re-sends only the tenants"
              + " not delivered (0 = off)");

  static final ConfigKey LEDGER_TTL =
      key(
          "relay.delivery.ledger.ttl",
          "10m",
          "how long the ledger remembers a delivered tenant of a failed request");

  static final ConfigKey THROTTLED_POLICY =
      key(
          "relay.delivery.throttled.policy",
          "drop",
          "a request whose only failures are tenants over their downstream limit (429): drop ="
              + " answer 429 to it at most relay.delivery.throttled.retries times, then 400 naming"
              + " those tenants, so that a sender that retries 429 forever (vmagent, Alloy) moves on"
              + " and its other tenants stay fresh; strict = 429 for as long as they are throttled");

  static final ConfigKey THROTTLED_RETRIES =
      key(
          "relay.delivery.throttled.retries",
          "1",
          "under policy drop: 429 answers to the same request body before it is answered 400");

  static final ConfigKey THROTTLED_RETRY_TIME =
      key(
          "relay.delivery.throttled.retry-time",
          "5s",
          "under policy drop: a body first answered 429 longer ago than this is answered 400 at"
              + " its next throttled attempt, however few its 429s");

  /** The keys of this group, in the order {@code --help} and docs/configuration.md list them. */
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
          THROTTLED_RETRY_TIME);
}
