package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;
import static io.prwrelay.server.config.ConfigKey.secret;

import java.util.List;

/**
 * The keys of the downstream Cortex/Mimir ({@code relay.downstream.*}): its URL and tenant header,
 * deadlines, pooled connections, the protocol sent, retry backoff, credentials and TLS trust.
 *
 * <p>One group of the catalogue: {@link ConfigKeys} names each of these keys and lists them, in the
 * order of {@link #KEYS}, for {@code --help}, docs/configuration.md and the loaders.
 */
final class DownstreamKeys {
  private DownstreamKeys() {}

  static final ConfigKey URL =
      key(
          "relay.downstream.url",
          "http://127.0.0.1:9009/api/v1/push",
          "Cortex/Mimir push URL (http or https); {tenant} in it is replaced by the tenant ID");

  static final ConfigKey TENANT_HEADER =
      key("relay.downstream.tenant-header", "X-Scope-OrgID", "header carrying the tenant ID");

  static final ConfigKey TIMEOUT =
      key(
          "relay.downstream.timeout",
          "10s",
          "deadline for delivering one sender request to every tenant, retries included");

  static final ConfigKey ATTEMPT_TIMEOUT =
      key(
          "relay.downstream.attempt-timeout",
          "5s",
          "deadline for one downstream attempt (connect + response), within the overall deadline");

  static final ConfigKey CONNECT_TIMEOUT =
      key("relay.downstream.connect-timeout", "2s", "TCP (and TLS) connect timeout");

  static final ConfigKey MAX_CONNECTIONS =
      key(
          "relay.downstream.max-connections",
          "64",
          "pooled keep-alive connections to the downstream host, split over the event loops (at"
              + " least one each)");

  static final ConfigKey PROTOCOL =
      key(
          "relay.downstream.protocol",
          "v1",
          "Remote Write version sent downstream for PRW 2.0 input: v1 (convert), v2, or auto (send"
              + " v2, fall back to v1 on a 415 and remember); PRW 1.0 input is always sent as v1");

  static final ConfigKey RETRY_INITIAL_BACKOFF =
      key(
          "relay.downstream.retry.initial-backoff",
          "100ms",
          "first retry delay (doubles per attempt, with jitter)");

  static final ConfigKey RETRY_MAX_BACKOFF =
      key(
          "relay.downstream.retry.max-backoff",
          "2s",
          "largest retry delay (Retry-After may ask for more)");

  static final ConfigKey BASIC_AUTH_USERNAME =
      key("relay.downstream.basic-auth.username", "", "basic auth user for the downstream");

  static final ConfigKey BASIC_AUTH_PASSWORD =
      secret("relay.downstream.basic-auth.password", "basic auth password (never logged)");

  static final ConfigKey BEARER_TOKEN =
      secret(
          "relay.downstream.bearer-token",
          "bearer token for the downstream (never logged); excludes basic auth");

  static final ConfigKey TLS_CA_FILE =
      key(
          "relay.downstream.tls.ca-file",
          "",
          "PEM file of CA certificates trusted for an https downstream (default: the JVM's)");

  static final ConfigKey TLS_INSECURE_SKIP_VERIFY =
      key(
          "relay.downstream.tls.insecure-skip-verify",
          "false",
          "accept any downstream certificate (testing only)");

  /** The keys of this group, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS =
      List.of(
          URL,
          TENANT_HEADER,
          TIMEOUT,
          ATTEMPT_TIMEOUT,
          CONNECT_TIMEOUT,
          MAX_CONNECTIONS,
          PROTOCOL,
          RETRY_INITIAL_BACKOFF,
          RETRY_MAX_BACKOFF,
          BASIC_AUTH_USERNAME,
          BASIC_AUTH_PASSWORD,
          BEARER_TOKEN,
          TLS_CA_FILE,
          TLS_INSECURE_SKIP_VERIFY);
}
