package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;
import static io.prwrelay.server.config.ConfigKey.secret;

import io.prwrelay.core.route.TenantRules;
import java.util.List;

/**
 * The catalogue of the relay's configuration keys: each key's name, default and meaning, declared
 * once here. The section loaders ({@link ServerConfig}, {@link DownstreamConfig}, {@link
 * TenantConfig}, {@link MetricsConfig}, {@link LogConfig}) read them through {@link ConfigValues};
 * messages that mention a key use {@link ConfigKey#name()} of these constants.
 */
public final class ConfigKeys {
  private ConfigKeys() {}

  public static final ConfigKey SERVER_HOST =
      key("relay.server.host", "0.0.0.0", "ingress listen address");
  public static final ConfigKey SERVER_PORT =
      key("relay.server.port", "8080", "ingress listen port (0 = any free port)");
  public static final ConfigKey SERVER_MAX_REQUEST_BYTES =
      key(
          "relay.server.max-request-bytes",
          "33554432",
          "largest compressed request body; larger bodies get 413");
  public static final ConfigKey SERVER_MAX_DECOMPRESSED_BYTES =
      key(
          "relay.server.max-decompressed-bytes",
          "134217728",
          "largest decompressed request, and largest total of the requests the relay builds of"
              + " one PRW 2.0 request (converted to PRW 1.0, or one PRW 2.0 request per tenant with"
              + " its own symbols table); larger requests get 400");
  public static final ConfigKey SERVER_MAX_DECOMPRESSION_RATIO =
      key(
          "relay.server.max-decompression-ratio",
          "256",
          "largest ratio of a request's decompressed size to its compressed body; a body that"
              + " decompresses to more gets 400 (real remote-write payloads compress 5 to 50"
              + " times; snappy cannot exceed about 21)");
  public static final ConfigKey SERVER_READ_TIMEOUT =
      key(
          "relay.server.read-timeout",
          "30s",
          "time allowed to receive one whole request; slower senders get 408 and are disconnected");
  public static final ConfigKey SERVER_IDLE_TIMEOUT =
      key(
          "relay.server.idle-timeout",
          "5m",
          "idle keep-alive connections are closed after this long without a request");
  public static final ConfigKey SERVER_IO_THREADS =
      key(
          "relay.server.io-threads",
          "0",
          "event loop threads for ingress and egress (0 = number of CPUs)");

  public static final ConfigKey SERVER_MAX_INFLIGHT_BYTES =
      key(
          "relay.server.max-inflight-bytes",
          "auto",
          "request memory admitted at once: each request's compressed body (its Content-Length"
              + " before it is read; a chunked body as it arrives) and then what it decompresses"
              + " to, held until the answer; more gets 503. auto = the smaller of half the JVM's"
              + " max direct memory and a quarter of its max heap, at least max-request-bytes");
  public static final ConfigKey SERVER_MAX_INFLIGHT_BYTES_PER_CLIENT =
      key(
          "relay.server.max-inflight-bytes-per-client",
          "auto",
          "share of max-inflight-bytes one client address may hold; more gets 503. auto = half of"
              + " max-inflight-bytes, at least max-request-bytes");
  public static final ConfigKey SERVER_MAX_CONNECTIONS =
      key(
          "relay.server.max-connections",
          "4096",
          "open ingress connections served; a connection beyond it gets 503 with Retry-After to"
              + " its first request, beyond twice it is closed at once");
  public static final ConfigKey SERVER_RELOAD_INTERVAL =
      key(
          "relay.server.reload-interval",
          "10s",
          "how often the TLS certificate, key and CA files and the bearer token file are checked"
              + " for changes");
  public static final ConfigKey SERVER_BASIC_AUTH_USERNAME =
      key(
          "relay.server.basic-auth.username",
          "",
          "user senders must present with basic auth (empty = no basic auth)");
  public static final ConfigKey SERVER_BASIC_AUTH_PASSWORD =
      secret("relay.server.basic-auth.password", "password of that user (never logged)");
  public static final ConfigKey SERVER_BASIC_AUTH_PASSWORD_FILE =
      key(
          "relay.server.basic-auth.password-file",
          "",
          "file holding that password (read at startup, a trailing newline ignored); excludes"
              + " relay.server.basic-auth.password");
  public static final ConfigKey SERVER_BASIC_AUTH_TENANTS =
      key(
          "relay.server.basic-auth.tenants",
          "",
          "comma-separated tenant IDs the basic auth user may write (empty = any)");
  public static final ConfigKey SERVER_BEARER_TOKEN =
      secret(
          "relay.server.bearer-token",
          "bearer token senders may present; may write any tenant (never logged)");
  public static final ConfigKey SERVER_BEARER_TOKEN_FILE =
      key(
          "relay.server.bearer-token-file",
          "",
          "file of bearer tokens, one per line as 'token' or 'token tenant1,tenant2' (the tenants"
              + " it may write); blank lines and lines starting with # ignored; re-read on change");
  public static final ConfigKey SERVER_AUTH_PROTECT_METRICS =
      key(
          "relay.server.auth.protect-metrics",
          "false",
          "GET /metrics needs the same credentials as writes (/-/healthy and /-/ready stay open)");
  public static final ConfigKey SERVER_TLS_CERT_FILE =
      key(
          "relay.server.tls.cert-file",
          "",
          "PEM certificate chain of the ingress; with key-file, the ingress speaks only TLS"
              + " (1.3 and 1.2); re-read on change");
  public static final ConfigKey SERVER_TLS_KEY_FILE =
      key(
          "relay.server.tls.key-file",
          "",
          "PEM private key (PKCS#8, unencrypted) of that certificate; re-read on change");
  public static final ConfigKey SERVER_TLS_CLIENT_CA_FILE =
      key(
          "relay.server.tls.client-ca-file",
          "",
          "PEM CA certificates that sign accepted client certificates; re-read on change");
  public static final ConfigKey SERVER_TLS_CLIENT_AUTH =
      key(
          "relay.server.tls.client-auth",
          "none",
          "client certificates: none, optional (verified when sent) or require");

  public static final ConfigKey DOWNSTREAM_URL =
      key(
          "relay.downstream.url",
          "http://127.0.0.1:9009/api/v1/push",
          "Cortex/Mimir push URL (http or https); {tenant} in it is replaced by the tenant ID");
  public static final ConfigKey DOWNSTREAM_TENANT_HEADER =
      key("relay.downstream.tenant-header", "X-Scope-OrgID", "header carrying the tenant ID");
  public static final ConfigKey DOWNSTREAM_TIMEOUT =
      key(
          "relay.downstream.timeout",
          "10s",
          "deadline for delivering one sender request to every tenant, retries included");
  public static final ConfigKey DOWNSTREAM_ATTEMPT_TIMEOUT =
      key(
          "relay.downstream.attempt-timeout",
          "5s",
          "deadline for one downstream attempt (connect + response), within the overall deadline");
  public static final ConfigKey DOWNSTREAM_CONNECT_TIMEOUT =
      key("relay.downstream.connect-timeout", "2s", "TCP (and TLS) connect timeout");
  public static final ConfigKey DOWNSTREAM_MAX_CONNECTIONS =
      key(
          "relay.downstream.max-connections",
          "64",
          "pooled keep-alive connections to the downstream host, split over the event loops (at"
              + " least one each)");
  public static final ConfigKey DOWNSTREAM_PROTOCOL =
      key(
          "relay.downstream.protocol",
          "v1",
          "Remote Write version sent downstream for PRW 2.0 input: v1 (convert), v2, or auto (send"
              + " v2, fall back to v1 on a 415 and remember); PRW 1.0 input is always sent as v1");
  public static final ConfigKey RETRY_INITIAL_BACKOFF =
      key(
          "relay.downstream.retry.initial-backoff",
          "100ms",
          "first retry delay (doubles per attempt, with jitter)");
  public static final ConfigKey RETRY_MAX_BACKOFF =
      key(
          "relay.downstream.retry.max-backoff",
          "2s",
          "largest retry delay (Retry-After may ask for more)");
  public static final ConfigKey BASIC_AUTH_USERNAME =
      key("relay.downstream.basic-auth.username", "", "basic auth user for the downstream");
  public static final ConfigKey BASIC_AUTH_PASSWORD =
      secret("relay.downstream.basic-auth.password", "basic auth password (never logged)");
  public static final ConfigKey BEARER_TOKEN =
      secret(
          "relay.downstream.bearer-token",
          "bearer token for the downstream (never logged); excludes basic auth");
  public static final ConfigKey TLS_CA_FILE =
      key(
          "relay.downstream.tls.ca-file",
          "",
          "PEM file of CA certificates trusted for an https downstream (default: the JVM's)");
  public static final ConfigKey TLS_INSECURE_SKIP_VERIFY =
      key(
          "relay.downstream.tls.insecure-skip-verify",
          "false",
          "accept any downstream certificate (testing only)");

  public static final ConfigKey DELIVERY_MODE =
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
          "queued bytes per tenant; beyond it the tenant's oldest records are dropped (counted)");
  public static final ConfigKey QUEUE_MAX_BYTES =
      key(
          "relay.delivery.queue.max-bytes",
          "8GiB",
          "queued bytes of all tenants; beyond it the largest queue's oldest records are dropped");
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

  public static final ConfigKey TENANT_LABELS =
      key(
          "relay.tenant.labels",
          TenantRules.DEFAULT_LABEL,
          "comma-separated tenant labels, each a valid Prometheus label name; the first one present"
              + " (in this order) wins");
  public static final ConfigKey TENANT_MISSING =
      key(
          "relay.tenant.missing",
          "default",
          "series without a valid tenant: default, drop or reject (the request, with 400)");
  public static final ConfigKey TENANT_DEFAULT =
      key(
          "relay.tenant.default",
          TenantRules.DEFAULT_TENANT,
          "tenant for such series under default");
  public static final ConfigKey TENANT_REMOVE_LABEL =
      key("relay.tenant.remove-label", "false", "strip the tenant label before forwarding");
  public static final ConfigKey TENANT_PREFIX =
      key("relay.tenant.prefix", "", "prepended to every tenant ID");
  public static final ConfigKey TENANT_TRUST_INCOMING_HEADER =
      key(
          "relay.tenant.trust-incoming-header",
          "false",
          "when a request carries the tenant header, send it whole to that tenant");
  public static final ConfigKey TENANT_MAX_CACHED =
      key(
          "relay.tenant.max-cached",
          String.valueOf(TenantRules.DEFAULT_MAX_CACHED_TENANTS),
          "distinct tenant values remembered per event loop before the cache starts over");
  public static final ConfigKey TENANT_MAX_PER_REQUEST =
      key(
          "relay.tenant.max-per-request",
          String.valueOf(TenantRules.DEFAULT_MAX_TENANTS_PER_REQUEST),
          "tenants one request may carry; a request with more is answered 400");
  public static final ConfigKey METADATA =
      key(
          "relay.metadata",
          "broadcast",
          "PRW 1.0 metadata: broadcast (to every tenant of the request; a request without series"
              + " sends each entry to the tenants that recently sent its metric family) or drop");
  public static final ConfigKey METADATA_MAX_BROADCAST_BYTES =
      key(
          "relay.metadata.max-broadcast-bytes",
          "16MiB",
          "most metadata bytes times tenants one request may copy; above it the request's"
              + " metadata (without series: the entries past the bound) is dropped (counted)");
  public static final ConfigKey METADATA_MAX_FAMILY_TENANTS =
      key(
          "relay.metadata.max-family-tenants",
          String.valueOf(TenantRules.DEFAULT_MAX_FAMILY_TENANTS),
          "metric family → tenant associations remembered to route metadata-only requests (a"
              + " family sent by 3 tenants counts 3; about 60 bytes each); the least recently seen"
              + " is forgotten first (0 = learn nothing: such metadata goes to the default tenant)");
  public static final ConfigKey METADATA_FAMILY_TTL =
      key(
          "relay.metadata.family-ttl",
          "10m",
          "a tenant stops receiving a family's metadata this long after its last series of that"
              + " family (at least 1s)");

  public static final ConfigKey METRICS_MAX_TENANTS =
      key(
          "relay.metrics.max-tenants",
          "100",
          "top tenants by volume that get their own metric series; the rest are counted as tenant=\"other\"");

  public static final ConfigKey METRICS_COUNT_SAMPLES =
      key(
          "relay.metrics.count-samples",
          String.valueOf(TenantRules.DEFAULT_COUNT_SAMPLES),
          "count the samples of PRW 1.0 requests per tenant (relay_tenant_samples_*_total); costs"
              + " reading every field of every series instead of stopping at the tenant label");

  public static final ConfigKey INSIGHT_ENABLED =
      key(
          "relay.insight.enabled",
          "true",
          "tenant insight: per-tenant active series (estimated), series/s, bytes/s and top metric"
              + " names over the window, served by GET /tenants and /api/v1/tenants and as"
              + " relay_tenant_active_series_estimate; costs hashing every series' labels");
  public static final ConfigKey INSIGHT_WINDOW =
      key(
          "relay.insight.window",
          "10m",
          "sliding window of the tenant insight (10 buckets of a tenth of it): a series not sent"
              + " for this long stops counting as active");
  public static final ConfigKey INSIGHT_MAX_TENANTS =
      key(
          "relay.insight.max-tenants",
          "1000",
          "tenants the insight tracks (1 to 100,000), the most active by series kept each tenth of"
              + " the window; about 54 KiB each");

  public static final ConfigKey LOG_FAILURE_INTERVAL =
      key(
          "relay.log.failure-interval",
          "10s",
          "at most one log line per tenant and failure kind per interval; while more than 5"
              + " tenants fail for the same reason, one line per reason and interval instead");
  public static final ConfigKey LOG_LEVEL =
      key(
          "relay.log.level",
          "info",
          "least severe level logged: error, warn, info or debug (ignored when"
              + " java.util.logging.config.file is set)");

  /** Keys that existed once, with what replaced them, for a helpful startup error. */
  public static final java.util.Map<String, String> REPLACED =
      java.util.Map.of(
          "relay.downstream.max-concurrent-sends",
          "relay.lanes.max-concurrent-sends (downstream requests in flight per tenant)");

  /** Every key, in the order {@code --help} and the README list them. */
  public static final List<ConfigKey> ALL =
      List.of(
          SERVER_HOST,
          SERVER_PORT,
          SERVER_MAX_REQUEST_BYTES,
          SERVER_MAX_DECOMPRESSED_BYTES,
          SERVER_MAX_DECOMPRESSION_RATIO,
          SERVER_READ_TIMEOUT,
          SERVER_IDLE_TIMEOUT,
          SERVER_IO_THREADS,
          SERVER_MAX_INFLIGHT_BYTES,
          SERVER_MAX_INFLIGHT_BYTES_PER_CLIENT,
          SERVER_MAX_CONNECTIONS,
          SERVER_RELOAD_INTERVAL,
          SERVER_BASIC_AUTH_USERNAME,
          SERVER_BASIC_AUTH_PASSWORD,
          SERVER_BASIC_AUTH_PASSWORD_FILE,
          SERVER_BASIC_AUTH_TENANTS,
          SERVER_BEARER_TOKEN,
          SERVER_BEARER_TOKEN_FILE,
          SERVER_AUTH_PROTECT_METRICS,
          SERVER_TLS_CERT_FILE,
          SERVER_TLS_KEY_FILE,
          SERVER_TLS_CLIENT_CA_FILE,
          SERVER_TLS_CLIENT_AUTH,
          DOWNSTREAM_URL,
          DOWNSTREAM_TENANT_HEADER,
          DOWNSTREAM_TIMEOUT,
          DOWNSTREAM_ATTEMPT_TIMEOUT,
          DOWNSTREAM_CONNECT_TIMEOUT,
          DOWNSTREAM_MAX_CONNECTIONS,
          DOWNSTREAM_PROTOCOL,
          RETRY_INITIAL_BACKOFF,
          RETRY_MAX_BACKOFF,
          BASIC_AUTH_USERNAME,
          BASIC_AUTH_PASSWORD,
          BEARER_TOKEN,
          TLS_CA_FILE,
          TLS_INSECURE_SKIP_VERIFY,
          DELIVERY_MODE,
          QUEUE_DIR,
          QUEUE_MAX_TENANT_BYTES,
          QUEUE_MAX_BYTES,
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
          TENANT_LABELS,
          TENANT_MISSING,
          TENANT_DEFAULT,
          TENANT_REMOVE_LABEL,
          TENANT_PREFIX,
          TENANT_TRUST_INCOMING_HEADER,
          TENANT_MAX_CACHED,
          TENANT_MAX_PER_REQUEST,
          METADATA,
          METADATA_MAX_BROADCAST_BYTES,
          METADATA_MAX_FAMILY_TENANTS,
          METADATA_FAMILY_TTL,
          METRICS_MAX_TENANTS,
          METRICS_COUNT_SAMPLES,
          INSIGHT_ENABLED,
          INSIGHT_WINDOW,
          INSIGHT_MAX_TENANTS,
          LOG_FAILURE_INTERVAL,
          LOG_LEVEL);
}
