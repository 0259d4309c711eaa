package io.prwrelay.server.config;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The catalogue of the relay's configuration keys, the one place users of the keys look: each key's
 * name, default and meaning is declared once, in the group of its area ({@link ServerKeys}, {@link
 * DownstreamKeys}, {@link DeliveryKeys}, {@link LaneKeys}, {@link TenantKeys}, {@link
 * MetadataKeys}, {@link ObservabilityKeys}), and named here; {@link #ALL} assembles the groups in
 * the order {@code --help} and docs/configuration.md list them. The section loaders ({@link
 * ServerConfig}, {@link DownstreamConfig}, {@link TenantConfig}, {@link MetricsConfig}, {@link
 * LogConfig}) read them through {@link ConfigValues}; messages that mention a key use {@link
 * ConfigKey#name()} of these constants.
 */
public final class ConfigKeys {
  private ConfigKeys() {}

  public static final ConfigKey SERVER_HOST = ServerKeys.HOST;
  public static final ConfigKey SERVER_PORT = ServerKeys.PORT;
  public static final ConfigKey SERVER_MAX_REQUEST_BYTES = ServerKeys.MAX_REQUEST_BYTES;
  public static final ConfigKey SERVER_MAX_DECOMPRESSED_BYTES = ServerKeys.MAX_DECOMPRESSED_BYTES;
  public static final ConfigKey SERVER_MAX_DECOMPRESSION_RATIO = ServerKeys.MAX_DECOMPRESSION_RATIO;
  public static final ConfigKey SERVER_READ_TIMEOUT = ServerKeys.READ_TIMEOUT;
  public static final ConfigKey SERVER_BODY_STALL_TIMEOUT = ServerKeys.BODY_STALL_TIMEOUT;
  public static final ConfigKey SERVER_IDLE_TIMEOUT = ServerKeys.IDLE_TIMEOUT;
  public static final ConfigKey SERVER_IO_THREADS = ServerKeys.IO_THREADS;
  public static final ConfigKey SERVER_MAX_INFLIGHT_BYTES = ServerKeys.MAX_INFLIGHT_BYTES;
  public static final ConfigKey SERVER_MAX_INFLIGHT_BYTES_PER_CLIENT =
      ServerKeys.MAX_INFLIGHT_BYTES_PER_CLIENT;
  public static final ConfigKey SERVER_MAX_CONNECTIONS = ServerKeys.MAX_CONNECTIONS;
  public static final ConfigKey SERVER_RELOAD_INTERVAL = ServerKeys.RELOAD_INTERVAL;
  public static final ConfigKey SERVER_BASIC_AUTH_USERNAME = ServerKeys.BASIC_AUTH_USERNAME;
  public static final ConfigKey SERVER_BASIC_AUTH_PASSWORD = ServerKeys.BASIC_AUTH_PASSWORD;
  public static final ConfigKey SERVER_BASIC_AUTH_PASSWORD_FILE =
      ServerKeys.BASIC_AUTH_PASSWORD_FILE;
  public static final ConfigKey SERVER_BASIC_AUTH_TENANTS = ServerKeys.BASIC_AUTH_TENANTS;
  public static final ConfigKey SERVER_BEARER_TOKEN = ServerKeys.BEARER_TOKEN;
  public static final ConfigKey SERVER_BEARER_TOKEN_FILE = ServerKeys.BEARER_TOKEN_FILE;
  public static final ConfigKey SERVER_AUTH_PROTECT_METRICS = ServerKeys.AUTH_PROTECT_METRICS;
  public static final ConfigKey SERVER_AUTH_VIEW_TOKEN = ServerKeys.AUTH_VIEW_TOKEN;
  public static final ConfigKey SERVER_TLS_CERT_FILE = ServerKeys.TLS_CERT_FILE;
  public static final ConfigKey SERVER_TLS_KEY_FILE = ServerKeys.TLS_KEY_FILE;
  public static final ConfigKey SERVER_TLS_CLIENT_CA_FILE = ServerKeys.TLS_CLIENT_CA_FILE;
  public static final ConfigKey SERVER_TLS_CLIENT_AUTH = ServerKeys.TLS_CLIENT_AUTH;

  public static final ConfigKey DOWNSTREAM_URL = DownstreamKeys.URL;
  public static final ConfigKey DOWNSTREAM_TENANT_HEADER = DownstreamKeys.TENANT_HEADER;
  public static final ConfigKey DOWNSTREAM_TIMEOUT = DownstreamKeys.TIMEOUT;
  public static final ConfigKey DOWNSTREAM_ATTEMPT_TIMEOUT = DownstreamKeys.ATTEMPT_TIMEOUT;
  public static final ConfigKey DOWNSTREAM_CONNECT_TIMEOUT = DownstreamKeys.CONNECT_TIMEOUT;
  public static final ConfigKey DOWNSTREAM_MAX_CONNECTIONS = DownstreamKeys.MAX_CONNECTIONS;
  public static final ConfigKey DOWNSTREAM_PROTOCOL = DownstreamKeys.PROTOCOL;
  public static final ConfigKey RETRY_INITIAL_BACKOFF = DownstreamKeys.RETRY_INITIAL_BACKOFF;
  public static final ConfigKey RETRY_MAX_BACKOFF = DownstreamKeys.RETRY_MAX_BACKOFF;
  public static final ConfigKey BASIC_AUTH_USERNAME = DownstreamKeys.BASIC_AUTH_USERNAME;
  public static final ConfigKey BASIC_AUTH_PASSWORD = DownstreamKeys.BASIC_AUTH_PASSWORD;
  public static final ConfigKey BEARER_TOKEN = DownstreamKeys.BEARER_TOKEN;
  public static final ConfigKey TLS_CA_FILE = DownstreamKeys.TLS_CA_FILE;
  public static final ConfigKey TLS_INSECURE_SKIP_VERIFY = DownstreamKeys.TLS_INSECURE_SKIP_VERIFY;

  public static final ConfigKey DELIVERY_MODE = DeliveryKeys.MODE;
  public static final ConfigKey QUEUE_DIR = DeliveryKeys.QUEUE_DIR;
  public static final ConfigKey QUEUE_MAX_TENANT_BYTES = DeliveryKeys.QUEUE_MAX_TENANT_BYTES;
  public static final ConfigKey QUEUE_MAX_BYTES = DeliveryKeys.QUEUE_MAX_BYTES;
  public static final ConfigKey QUEUE_FULL_POLICY = DeliveryKeys.QUEUE_FULL_POLICY;
  public static final ConfigKey QUEUE_MAX_NEW_TENANTS_PER_REQUEST =
      DeliveryKeys.QUEUE_MAX_NEW_TENANTS_PER_REQUEST;
  public static final ConfigKey QUEUE_MAX_NEW_TENANTS_PER_SECOND =
      DeliveryKeys.QUEUE_MAX_NEW_TENANTS_PER_SECOND;
  public static final ConfigKey QUEUE_MAX_AGE = DeliveryKeys.QUEUE_MAX_AGE;
  public static final ConfigKey QUEUE_SEGMENT_BYTES = DeliveryKeys.QUEUE_SEGMENT_BYTES;
  public static final ConfigKey QUEUE_DIRECT_TIMEOUT = DeliveryKeys.QUEUE_DIRECT_TIMEOUT;
  public static final ConfigKey LEDGER_MAX_ENTRIES = DeliveryKeys.LEDGER_MAX_ENTRIES;
  public static final ConfigKey LEDGER_TTL = DeliveryKeys.LEDGER_TTL;
  public static final ConfigKey THROTTLED_POLICY = DeliveryKeys.THROTTLED_POLICY;
  public static final ConfigKey THROTTLED_RETRIES = DeliveryKeys.THROTTLED_RETRIES;
  public static final ConfigKey THROTTLED_RETRY_TIME = DeliveryKeys.THROTTLED_RETRY_TIME;

  public static final ConfigKey LANES_MAX_CONCURRENT_SENDS = LaneKeys.MAX_CONCURRENT_SENDS;
  public static final ConfigKey LANES_MAX_PENDING_BYTES = LaneKeys.MAX_PENDING_BYTES;
  public static final ConfigKey LANES_BATCH_MAX_BYTES = LaneKeys.BATCH_MAX_BYTES;
  public static final ConfigKey LANES_LINGER = LaneKeys.LINGER;
  public static final ConfigKey LANES_IDLE_TIMEOUT = LaneKeys.IDLE_TIMEOUT;
  public static final ConfigKey LANES_MAX = LaneKeys.MAX;
  public static final ConfigKey LANES_NEW_PER_SENDER_RATE = LaneKeys.NEW_PER_SENDER_RATE;
  public static final ConfigKey LANES_NEW_PER_SENDER_BURST = LaneKeys.NEW_PER_SENDER_BURST;

  public static final ConfigKey TENANT_LABELS = TenantKeys.LABELS;
  public static final ConfigKey TENANT_MISSING = TenantKeys.MISSING;
  public static final ConfigKey TENANT_DEFAULT = TenantKeys.DEFAULT;
  public static final ConfigKey TENANT_REMOVE_LABEL = TenantKeys.REMOVE_LABEL;
  public static final ConfigKey TENANT_PREFIX = TenantKeys.PREFIX;
  public static final ConfigKey TENANT_TRUST_INCOMING_HEADER = TenantKeys.TRUST_INCOMING_HEADER;
  public static final ConfigKey TENANT_MAX_CACHED = TenantKeys.MAX_CACHED;
  public static final ConfigKey TENANT_MAX_PER_REQUEST = TenantKeys.MAX_PER_REQUEST;
  public static final ConfigKey TENANT_ALLOWED = TenantKeys.ALLOWED;
  public static final ConfigKey TENANT_HA_CLUSTER_LABEL = TenantKeys.HA_CLUSTER_LABEL;
  public static final ConfigKey TENANT_HA_REPLICA_LABEL = TenantKeys.HA_REPLICA_LABEL;

  public static final ConfigKey METADATA = MetadataKeys.METADATA;
  public static final ConfigKey METADATA_MAX_BROADCAST_BYTES = MetadataKeys.MAX_BROADCAST_BYTES;
  public static final ConfigKey METADATA_MAX_FAMILY_TENANTS = MetadataKeys.MAX_FAMILY_TENANTS;
  public static final ConfigKey METADATA_FAMILY_TTL = MetadataKeys.FAMILY_TTL;

  public static final ConfigKey METRICS_MAX_TENANTS = ObservabilityKeys.METRICS_MAX_TENANTS;
  public static final ConfigKey METRICS_COUNT_SAMPLES = ObservabilityKeys.METRICS_COUNT_SAMPLES;
  public static final ConfigKey INSIGHT_ENABLED = ObservabilityKeys.INSIGHT_ENABLED;
  public static final ConfigKey INSIGHT_WINDOW = ObservabilityKeys.INSIGHT_WINDOW;
  public static final ConfigKey INSIGHT_MAX_TENANTS = ObservabilityKeys.INSIGHT_MAX_TENANTS;
  public static final ConfigKey LOG_FAILURE_INTERVAL = ObservabilityKeys.LOG_FAILURE_INTERVAL;
  public static final ConfigKey LOG_LEVEL = ObservabilityKeys.LOG_LEVEL;

  public static final ConfigKey LIMITS_MAX_SERIES = LimitsKeys.MAX_SERIES;
  public static final ConfigKey LIMITS_ACTIVE_SERIES_WINDOW = LimitsKeys.ACTIVE_SERIES_WINDOW;
  public static final ConfigKey LIMITS_SAMPLES_PER_SECOND = LimitsKeys.SAMPLES_PER_SECOND;
  public static final ConfigKey LIMITS_SAMPLES_BURST = LimitsKeys.SAMPLES_BURST;
  public static final ConfigKey LIMITS_OVERRIDES_FILE = LimitsKeys.OVERRIDES_FILE;
  public static final ConfigKey LIMITS_RELOAD_PERIOD = LimitsKeys.RELOAD_PERIOD;
  public static final ConfigKey LIMITS_MAX_MEMORY_BYTES = LimitsKeys.MAX_MEMORY_BYTES;

  /** Keys that existed once, with what replaced them, for a helpful startup error. */
  public static final Map<String, String> REPLACED =
      Map.of(
          "relay.downstream.max-concurrent-sends",
          "relay.lanes.max-concurrent-sends (downstream requests in flight per tenant)");

  /**
   * Every key, group after group, in the order {@code --help} and docs/configuration.md list them.
   */
  public static final List<ConfigKey> ALL =
      Stream.of(
              ServerKeys.KEYS,
              DownstreamKeys.KEYS,
              DeliveryKeys.KEYS,
              LaneKeys.KEYS,
              TenantKeys.KEYS,
              MetadataKeys.KEYS,
              LimitsKeys.KEYS,
              ObservabilityKeys.KEYS)
          .flatMap(List::stream)
          .toList();
}
