package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import java.util.List;

/**
 * The keys of the tenant lanes ({@code relay.lanes.*}): requests in flight per tenant, the bytes
 * that may wait, how fragments are merged into one downstream request, and how many lanes live at
 * once.
 *
 * <p>One group of the catalogue: {@link ConfigKeys} names each of these keys and lists them, in the
 * order of {@link #KEYS}, for {@code --help}, docs/configuration.md and the loaders.
 */
final class LaneKeys {
  private LaneKeys() {}

  static final ConfigKey MAX_CONCURRENT_SENDS =
      key(
          "relay.lanes.max-concurrent-sends",
          "4",
          "downstream requests one tenant may have in flight at once from its lane, and as many again"
              + " from each other event loop that sends its large batches (its share of the"
              + " connections)");

  static final ConfigKey MAX_PENDING_BYTES =
      key(
          "relay.lanes.max-pending-bytes",
          "64MiB",
          "uncompressed bytes that may wait in one tenant's lane (sync mode); more gets 503");

  static final ConfigKey BATCH_MAX_BYTES =
      key(
          "relay.lanes.batch-max-bytes",
          "8MiB",
          "largest downstream request made by merging a tenant's waiting fragments (uncompressed)");

  static final ConfigKey LINGER =
      key(
          "relay.lanes.linger",
          "5ms",
          "how long a tenant with a request in flight waits for more fragments before opening another");

  static final ConfigKey IDLE_TIMEOUT =
      key(
          "relay.lanes.idle-timeout",
          "5m",
          "a tenant's lane with nothing to do and no backoff in force is forgotten after this long");

  static final ConfigKey MAX =
      key(
          "relay.lanes.max",
          "100000",
          "tenant lanes at most; a new tenant when all are busy gets 503");

  static final ConfigKey NEW_PER_SENDER_RATE =
      key(
          "relay.lanes.new-per-sender-rate",
          "100",
          "new tenant lanes one sender (its credential with inbound auth, else its address) may"
              + " cause a second once its burst is spent; its batches for further new tenants get"
              + " 503 with Retry-After; 0 = no bound");

  static final ConfigKey NEW_PER_SENDER_BURST =
      key(
          "relay.lanes.new-per-sender-burst",
          "10000",
          "new tenant lanes one sender may cause at once after a quiet spell (a restart of a sender"
              + " of many tenants)");

  /** The keys of this group, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS =
      List.of(
          MAX_CONCURRENT_SENDS,
          MAX_PENDING_BYTES,
          BATCH_MAX_BYTES,
          LINGER,
          IDLE_TIMEOUT,
          MAX,
          NEW_PER_SENDER_RATE,
          NEW_PER_SENDER_BURST);
}
