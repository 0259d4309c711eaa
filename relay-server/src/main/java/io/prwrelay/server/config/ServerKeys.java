package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;
import static io.prwrelay.server.config.ConfigKey.secret;

import java.util.List;

/**
 * The keys of the ingress ({@code relay.server.*}): where it listens, the bounds a request must
 * keep, the memory and connections it admits, and how senders authenticate (basic auth, bearer
 * tokens, TLS client certificates).
 *
 * <p>One group of the catalogue: {@link ConfigKeys} names each of these keys and lists them, in the
 * order of {@link #KEYS}, for {@code --help}, docs/configuration.md and the loaders.
 */
final class ServerKeys {
  private ServerKeys() {}

  static final ConfigKey HOST = key("relay.server.host", "0.0.0.0", "ingress listen address");

  static final ConfigKey PORT =
      key("relay.server.port", "8080", "ingress listen port (0 = any free port)");

  static final ConfigKey MAX_REQUEST_BYTES =
      key(
          "relay.server.max-request-bytes",
          "33554432",
          "largest compressed request body; larger bodies get 413");

  static final ConfigKey MAX_DECOMPRESSED_BYTES =
      key(
          "relay.server.max-decompressed-bytes",
          "134217728",
          "largest decompressed request, and largest total of the requests the relay builds of"
              + " one PRW 2.0 request (converted to PRW 1.0, or one PRW 2.0 request per tenant with"
              + " its own symbols table); larger requests get 400");

  static final ConfigKey MAX_DECOMPRESSION_RATIO =
      key(
          "relay.server.max-decompression-ratio",
          "256",
          "largest ratio of a request's decompressed size to its compressed body; a body that"
              + " decompresses to more gets 400 (real remote-write payloads compress 5 to 50"
              + " times; snappy cannot exceed about 21)");

  static final ConfigKey READ_TIMEOUT =
      key(
          "relay.server.read-timeout",
          "30s",
          "time allowed to receive one whole request; slower senders get 408 and are disconnected");

  static final ConfigKey BODY_STALL_TIMEOUT =
      key(
          "relay.server.body-stall-timeout",
          "10s",
          "a request body of which no byte arrives for this long gets 408 and is disconnected, its"
              + " memory returned (the whole body still has relay.server.read-timeout)");

  static final ConfigKey IDLE_TIMEOUT =
      key(
          "relay.server.idle-timeout",
          "5m",
          "idle keep-alive connections are closed after this long without a request");

  static final ConfigKey IO_THREADS =
      key(
          "relay.server.io-threads",
          "0",
          "event loop threads for ingress and egress (0 = number of CPUs)");

  static final ConfigKey MAX_INFLIGHT_BYTES =
      key(
          "relay.server.max-inflight-bytes",
          "auto",
          "request memory admitted at once: each request's compressed body (as it arrives, from"
              + " a first buffer of 64 KiB; never its declared Content-Length), then what it"
              + " decompresses to, then the tenant requests built of it, held until the answer;"
              + " more gets 503. auto = the smaller of half the JVM's"
              + " max direct memory and a quarter of its max heap, at least max-request-bytes");

  static final ConfigKey MAX_INFLIGHT_BYTES_PER_CLIENT =
      key(
          "relay.server.max-inflight-bytes-per-client",
          "auto",
          "share of max-inflight-bytes one sender (client IP address, and credential under"
              + " inbound auth) may hold; more gets 503. auto = half of max-inflight-bytes, at"
              + " least max-request-bytes");

  static final ConfigKey MAX_CONNECTIONS =
      key(
          "relay.server.max-connections",
          "4096",
          "open ingress connections served; a connection beyond it gets 503 with Retry-After to"
              + " its first request, beyond twice it is closed at once");

  static final ConfigKey RELOAD_INTERVAL =
      key(
          "relay.server.reload-interval",
          "10s",
          "how often the TLS certificate, key and CA files and the bearer token file are checked"
              + " for changes");

  static final ConfigKey BASIC_AUTH_USERNAME =
      key(
          "relay.server.basic-auth.username",
          "",
          "user senders must present with basic auth (empty = no basic auth)");

  static final ConfigKey BASIC_AUTH_PASSWORD =
      secret("relay.server.basic-auth.password", "password of that user (never logged)");

  static final ConfigKey BASIC_AUTH_PASSWORD_FILE =
      key(
          "relay.server.basic-auth.password-file",
          "",
          "file holding that password (read at startup, a trailing newline ignored); excludes"
              + " relay.server.basic-auth.password");

  static final ConfigKey BASIC_AUTH_TENANTS =
      key(
          "relay.server.basic-auth.tenants",
          "",
          "comma-separated tenant IDs the basic auth user may write (empty = any)");

  static final ConfigKey BEARER_TOKEN =
      secret(
          "relay.server.bearer-token",
          "bearer token senders may present; may write any tenant (never logged)");

  static final ConfigKey BEARER_TOKEN_FILE =
      key(
          "relay.server.bearer-token-file",
          "",
          "file of bearer tokens, one per line as 'token' or 'token tenant1,tenant2' (the tenants"
              + " it may write); blank lines and lines starting with # ignored; re-read on change");

  static final ConfigKey AUTH_PROTECT_METRICS =
      key(
          "relay.server.auth.protect-metrics",
          "false",
          "GET /metrics, /tenants and /api/v1/tenants need credentials (/-/healthy and /-/ready"
              + " stay open): a writer limited to some tenants sees only their rows and series, a"
              + " writer of every tenant and relay.server.auth.view-token everything");

  static final ConfigKey AUTH_VIEW_TOKEN =
      secret(
          "relay.server.auth.view-token",
          "bearer token that may read all of /metrics, /tenants and /api/v1/tenants under"
              + " relay.server.auth.protect-metrics (an operator's or a scraper's), and write"
              + " nothing");

  static final ConfigKey TLS_CERT_FILE =
      key(
          "relay.server.tls.cert-file",
          "",
          "PEM certificate chain of the ingress; with key-file, the ingress speaks only TLS"
              + " (1.3 and 1.2); re-read on change");

  static final ConfigKey TLS_KEY_FILE =
      key(
          "relay.server.tls.key-file",
          "",
          "PEM private key (PKCS#8, unencrypted) of that certificate; re-read on change");

  static final ConfigKey TLS_CLIENT_CA_FILE =
      key(
          "relay.server.tls.client-ca-file",
          "",
          "PEM CA certificates that sign accepted client certificates; re-read on change");

  static final ConfigKey TLS_CLIENT_AUTH =
      key(
          "relay.server.tls.client-auth",
          "none",
          "client certificates: none, optional (verified when sent) or require");

  /** The keys of this group, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS =
      List.of(
          HOST,
          PORT,
          MAX_REQUEST_BYTES,
          MAX_DECOMPRESSED_BYTES,
          MAX_DECOMPRESSION_RATIO,
          READ_TIMEOUT,
          BODY_STALL_TIMEOUT,
          IDLE_TIMEOUT,
          IO_THREADS,
          MAX_INFLIGHT_BYTES,
          MAX_INFLIGHT_BYTES_PER_CLIENT,
          MAX_CONNECTIONS,
          RELOAD_INTERVAL,
          BASIC_AUTH_USERNAME,
          BASIC_AUTH_PASSWORD,
          BASIC_AUTH_PASSWORD_FILE,
          BASIC_AUTH_TENANTS,
          BEARER_TOKEN,
          BEARER_TOKEN_FILE,
          AUTH_PROTECT_METRICS,
          AUTH_VIEW_TOKEN,
          TLS_CERT_FILE,
          TLS_KEY_FILE,
          TLS_CLIENT_CA_FILE,
          TLS_CLIENT_AUTH);
}
