package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKeys.BASIC_AUTH_PASSWORD;
import static io.prwrelay.server.config.ConfigKeys.BASIC_AUTH_USERNAME;
import static io.prwrelay.server.config.ConfigKeys.BEARER_TOKEN;
import static io.prwrelay.server.config.ConfigKeys.DOWNSTREAM_ATTEMPT_TIMEOUT;
import static io.prwrelay.server.config.ConfigKeys.DOWNSTREAM_CONNECT_TIMEOUT;
import static io.prwrelay.server.config.ConfigKeys.DOWNSTREAM_MAX_CONNECTIONS;
import static io.prwrelay.server.config.ConfigKeys.DOWNSTREAM_PROTOCOL;
import static io.prwrelay.server.config.ConfigKeys.DOWNSTREAM_TENANT_HEADER;
import static io.prwrelay.server.config.ConfigKeys.DOWNSTREAM_TIMEOUT;
import static io.prwrelay.server.config.ConfigKeys.DOWNSTREAM_URL;
import static io.prwrelay.server.config.ConfigKeys.RETRY_INITIAL_BACKOFF;
import static io.prwrelay.server.config.ConfigKeys.RETRY_MAX_BACKOFF;
import static io.prwrelay.server.config.ConfigKeys.TLS_CA_FILE;
import static io.prwrelay.server.config.ConfigKeys.TLS_INSECURE_SKIP_VERIFY;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;

/**
 * The downstream settings ({@code relay.downstream.*}): where and how to send tenant batches, their
 * deadlines, connections and retry backoff, credentials and TLS trust.
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
    URI url = v.url(DOWNSTREAM_URL);
    String tenantHeader = v.string(DOWNSTREAM_TENANT_HEADER);
    if (!tenantHeader.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]+")) {
      throw v.invalid(DOWNSTREAM_TENANT_HEADER, "is not a valid HTTP header name");
    }
    Duration timeout = v.duration(DOWNSTREAM_TIMEOUT);
    Duration attemptTimeout = v.duration(DOWNSTREAM_ATTEMPT_TIMEOUT);
    Duration connectTimeout = v.duration(DOWNSTREAM_CONNECT_TIMEOUT);
    int maxConnections = v.integer(DOWNSTREAM_MAX_CONNECTIONS, 1, 100_000);
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
        v.choice(DOWNSTREAM_PROTOCOL, ProtocolMode.class));
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
