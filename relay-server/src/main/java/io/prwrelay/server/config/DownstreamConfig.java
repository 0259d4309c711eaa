package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;
import static io.prwrelay.server.config.ConfigKey.secret;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * The downstream settings ({@code relay.downstream.*}): where and how to send tenant batches, their
 * deadlines, connections and retry backoff, credentials and TLS trust.
 *
 * <p>Declares the keys it reads.
 *
 * @param url push URL; {@code %7Btenant%7D} in its path or query stands for the tenant ID
 * @param tenantHeader header carrying the tenant ID
 * @param timeout deadline for delivering one sender request, retries included
 * @param attemptTimeout deadline for one attempt, within {@code timeout}
 * @param maxConnections pooled connections across all event loops
 * @param initialBackoff first retry delay
 * @param maxBackoff largest retry delay (a downstream's {@code Retry-After} may ask for more)
 * @param protocol the Remote Write version sent for PRW 2.0 input ({@code
 *     relay.downstream.protocol})
 */
public record DownstreamConfig(
    URI url,
    String tenantHeader,
    Duration timeout,
    Duration attemptTimeout,
    Duration connectTimeout,
    int maxConnections,
    Duration initialBackoff,
    Duration maxBackoff,
    Auth auth,
    Tls tls,
    ProtocolMode protocol) {

  public static final ConfigKey URL =
      key(
          "relay.downstream.url",
          "http://127.0.0.1:9009/api/v1/push",
          "Cortex/Mimir push URL (http or https); {tenant} in it is replaced by the tenant ID");

  public static final ConfigKey TENANT_HEADER =
      key("relay.downstream.tenant-header", "X-Scope-OrgID", "header carrying the tenant ID");

  public static final ConfigKey TIMEOUT =
      key(
          "relay.downstream.timeout",
          "10s",
          "deadline for delivering one sender request to every tenant, retries included");

  public static final ConfigKey ATTEMPT_TIMEOUT =
      key(
          "relay.downstream.attempt-timeout",
          "5s",
          "deadline for one downstream attempt (connect + response), within the overall deadline");

  public static final ConfigKey CONNECT_TIMEOUT =
      key("relay.downstream.connect-timeout", "2s", "TCP (and TLS) connect timeout");

  public static final ConfigKey MAX_CONNECTIONS =
      key(
          "relay.downstream.max-connections",
          "64",
          "pooled keep-alive connections to the downstream host, split over the event loops (at"
              + " least one each)");

  public static final ConfigKey PROTOCOL =
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

  /** The keys of this section, in the order {@code --help} and docs/configuration.md list them. */
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

  /**
   * What the downstream is sent for PRW 2.0 input ({@code relay.downstream.protocol}); PRW 1.0
   * input always goes out as 1.0.
   */
  public enum ProtocolMode {
    /** Convert to PRW 1.0 (the default: Cortex answers 415 to 2.0 unless enabled). */
    V1,
    /** Send PRW 2.0, one tenant request with its own symbols table each. */
    V2,
    /** Send PRW 2.0; after a 415 convert to 1.0 from then on. */
    AUTO
  }

  /** Credentials sent to the downstream: none, basic auth, or a bearer token. */
  public static final class Auth {
    private static final Auth NONE = new Auth("none", null);

    private final String kind;
    private final String authorization;

    private Auth(String kind, String authorization) {
      this.kind = kind;
      this.authorization = authorization;
    }

    public static Auth none() {
      return NONE;
    }

    public static Auth basic(String username, String password) {
      String userPass = username + ":" + password;
      return new Auth(
          "basic",
          "Basic " + Base64.getEncoder().encodeToString(userPass.getBytes(StandardCharsets.UTF_8)));
    }

    public static Auth bearer(String token) {
      return new Auth("bearer", "Bearer " + token);
    }

    /** {@code none}, {@code basic} or {@code bearer}: safe to log. */
    public String kind() {
      return kind;
    }

    /** Value of the {@code Authorization} header, when there are credentials. A secret. */
    public Optional<String> authorization() {
      return Optional.ofNullable(authorization);
    }

    /** The kind only: credentials never appear in a string form. */
    @Override
    public String toString() {
      return kind;
    }
  }

  /**
   * Trust for an https downstream.
   *
   * @param caFile PEM file of trusted CA certificates, or {@code null} for the JVM's
   * @param insecureSkipVerify accept any certificate (testing only)
   */
  public record Tls(Path caFile, boolean insecureSkipVerify) {}

  /** Whether the URL is https. */
  public boolean https() {
    return url.getScheme().equalsIgnoreCase("https");
  }

  static DownstreamConfig load(ConfigValues v) throws ConfigException {
    URI url = v.url(URL);
    String tenantHeader = v.string(TENANT_HEADER);
    if (!tenantHeader.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]+")) {
      throw v.invalid(TENANT_HEADER, "is not a valid HTTP header name");
    }
    Duration timeout = v.duration(TIMEOUT);
    Duration attemptTimeout = v.duration(ATTEMPT_TIMEOUT);
    Duration connectTimeout = v.duration(CONNECT_TIMEOUT);
    int maxConnections = v.integer(MAX_CONNECTIONS, 1, 100_000);
    Duration initialBackoff = v.duration(RETRY_INITIAL_BACKOFF);
    Duration maxBackoff = v.duration(RETRY_MAX_BACKOFF);
    if (maxBackoff.compareTo(initialBackoff) < 0) {
      throw v.invalid(RETRY_MAX_BACKOFF, "must not be less than " + RETRY_INITIAL_BACKOFF.name());
    }
    return new DownstreamConfig(
        url,
        tenantHeader,
        timeout,
        attemptTimeout,
        connectTimeout,
        maxConnections,
        initialBackoff,
        maxBackoff,
        auth(v),
        tls(v),
        v.choice(PROTOCOL, ProtocolMode.class));
  }

  private static Auth auth(ConfigValues v) throws ConfigException {
    String username = v.string(BASIC_AUTH_USERNAME);
    String password = v.string(BASIC_AUTH_PASSWORD);
    String token = v.string(BEARER_TOKEN);
    if (!token.isEmpty() && !username.isEmpty()) {
      throw v.invalid(BEARER_TOKEN, "cannot be combined with " + BASIC_AUTH_USERNAME.name());
    }
    if (username.contains(":")) {
      throw v.invalid(BASIC_AUTH_USERNAME, "must not contain ':'");
    }
    if (!password.isEmpty() && username.isEmpty()) {
      throw v.invalid(BASIC_AUTH_PASSWORD, "needs " + BASIC_AUTH_USERNAME.name());
    }
    rejectControlCharacters(v, BASIC_AUTH_USERNAME, username);
    rejectControlCharacters(v, BASIC_AUTH_PASSWORD, password);
    rejectControlCharacters(v, BEARER_TOKEN, token);
    if (!token.isEmpty()) {
      return Auth.bearer(token);
    }
    return username.isEmpty() ? Auth.none() : Auth.basic(username, password);
  }

  /** Credentials go into a header: a control character there would split or corrupt it. */
  private static void rejectControlCharacters(ConfigValues v, ConfigKey key, String value)
      throws ConfigException {
    if (value.chars().anyMatch(c -> c < 0x20 || c == 0x7F)) {
      throw v.invalidWithoutValue(key, "must not contain control characters");
    }
  }

  private static Tls tls(ConfigValues v) throws ConfigException {
    String ca = v.string(TLS_CA_FILE);
    Path caFile = ca.isEmpty() ? null : Path.of(ca);
    if (caFile != null && !Files.isReadable(caFile)) {
      throw v.invalid(TLS_CA_FILE, "file " + ca + " is not readable");
    }
    return new Tls(caFile, v.bool(TLS_INSECURE_SKIP_VERIFY));
  }
}
