package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;
import static io.prwrelay.server.config.ConfigKey.secret;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Credentials senders must present to the ingress ({@code relay.server.basic-auth.*}, {@code
 * relay.server.bearer-token*}): none by default. Either kind, when configured, lets a request in;
 * each credential may be limited to a list of tenants. The password and the token are secrets:
 * {@link #toString()} names only the kinds.
 *
 * <p>Declares the keys it reads, those named above and {@code relay.server.auth.*}.
 *
 * @param username basic auth user, or empty
 * @param password basic auth password (from the key or its file); a secret
 * @param basicTenants tenant IDs the basic auth user may write; empty = any
 * @param bearerToken a token that may write any tenant, or empty; a secret
 * @param bearerTokenFile file of tokens (with their tenants), or {@code null}
 * @param protectMetrics {@code GET /metrics}, {@code /tenants} and {@code /api/v1/tenants} need
 *     credentials too
 * @param viewToken a token that may read those endpoints in full and write nothing, or empty; a
 *     secret
 */
public record InboundAuthConfig(
    String username,
    String password,
    List<String> basicTenants,
    String bearerToken,
    Path bearerTokenFile,
    boolean protectMetrics,
    String viewToken) {

  public static final ConfigKey BASIC_AUTH_USERNAME =
      key(
          "relay.server.basic-auth.username",
          "",
          "user senders must present with basic auth (empty = no basic auth)");

  public static final ConfigKey BASIC_AUTH_PASSWORD =
      secret("relay.server.basic-auth.password", "password of that user (never logged)");

  public static final ConfigKey BASIC_AUTH_PASSWORD_FILE =
      key(
          "relay.server.basic-auth.password-file",
          "",
          "file holding that password (read at startup, a trailing newline ignored); excludes"
              + " relay.server.basic-auth.password");

  public static final ConfigKey BASIC_AUTH_TENANTS =
      key(
          "relay.server.basic-auth.tenants",
          "",
          "comma-separated tenant IDs the basic auth user may write (empty = any)");

  public static final ConfigKey BEARER_TOKEN =
      secret(
          "relay.server.bearer-token",
          "bearer token senders may present; may write any tenant (never logged)");

  public static final ConfigKey BEARER_TOKEN_FILE =
      key(
          "relay.server.bearer-token-file",
          "",
          "file of bearer tokens, one per line as 'token' or 'token tenant1,tenant2' (the tenants"
              + " it may write); blank lines and lines starting with # ignored; re-read on change");

  public static final ConfigKey PROTECT_METRICS =
      key(
          "relay.server.auth.protect-metrics",
          "false",
          "GET /metrics, /tenants and /api/v1/tenants need credentials (/-/healthy and /-/ready"
              + " stay open): a writer limited to some tenants sees only their rows and series, a"
              + " writer of every tenant and relay.server.auth.view-token everything");

  public static final ConfigKey VIEW_TOKEN =
      secret(
          "relay.server.auth.view-token",
          "bearer token that may read all of /metrics, /tenants and /api/v1/tenants under"
              + " relay.server.auth.protect-metrics (an operator's or a scraper's), and write"
              + " nothing");

  /** The keys of this section, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS =
      List.of(
          BASIC_AUTH_USERNAME,
          BASIC_AUTH_PASSWORD,
          BASIC_AUTH_PASSWORD_FILE,
          BASIC_AUTH_TENANTS,
          BEARER_TOKEN,
          BEARER_TOKEN_FILE,
          PROTECT_METRICS,
          VIEW_TOKEN);

  /** Whether senders must present credentials at all. */
  public boolean enabled() {
    return !username.isEmpty() || !bearerToken.isEmpty() || bearerTokenFile != null;
  }

  static InboundAuthConfig load(ConfigValues v) throws ConfigException {
    String username = v.string(BASIC_AUTH_USERNAME);
    String password = v.string(BASIC_AUTH_PASSWORD);
    String passwordFile = v.string(BASIC_AUTH_PASSWORD_FILE);
    if (!passwordFile.isEmpty()) {
      if (!password.isEmpty()) {
        throw v.invalid(
            BASIC_AUTH_PASSWORD_FILE, "cannot be combined with " + BASIC_AUTH_PASSWORD.name());
      }
      try {
        password = stripLineEnd(Files.readString(Path.of(passwordFile), StandardCharsets.UTF_8));
      } catch (IOException | RuntimeException e) {
        throw v.invalid(BASIC_AUTH_PASSWORD_FILE, "cannot be read (" + e + ")");
      }
    }
    if (username.contains(":")) {
      throw v.invalid(BASIC_AUTH_USERNAME, "must not contain ':'");
    }
    if (!username.isEmpty() && password.isEmpty()) {
      throw v.invalidWithoutValue(
          BASIC_AUTH_USERNAME,
          "needs a password: "
              + BASIC_AUTH_PASSWORD.name()
              + " or "
              + BASIC_AUTH_PASSWORD_FILE.name());
    }
    if (username.isEmpty() && !password.isEmpty()) {
      throw v.invalidWithoutValue(BASIC_AUTH_PASSWORD, "needs " + BASIC_AUTH_USERNAME.name());
    }
    String tenants = v.string(BASIC_AUTH_TENANTS);
    List<String> basicTenants =
        tenants.isEmpty()
            ? List.of()
            : Arrays.stream(tenants.split(","))
                .map(String::trim)
                .filter(t -> !t.isEmpty())
                .toList();
    if (!basicTenants.isEmpty() && username.isEmpty()) {
      throw v.invalid(BASIC_AUTH_TENANTS, "needs " + BASIC_AUTH_USERNAME.name());
    }
    String token = v.string(BEARER_TOKEN);
    if (token.chars().anyMatch(c -> c <= 0x20 || c == 0x7F)) {
      throw v.invalidWithoutValue(BEARER_TOKEN, "must not contain spaces or control characters");
    }
    String file = v.string(BEARER_TOKEN_FILE);
    Path tokenFile = file.isEmpty() ? null : Path.of(file);
    if (tokenFile != null && !Files.isReadable(tokenFile)) {
      throw v.invalid(BEARER_TOKEN_FILE, "file " + file + " is not readable");
    }
    boolean protectMetrics = v.bool(PROTECT_METRICS);
    String viewToken = v.string(VIEW_TOKEN);
    if (viewToken.chars().anyMatch(c -> c <= 0x20 || c == 0x7F)) {
      throw v.invalidWithoutValue(VIEW_TOKEN, "must not contain spaces or control characters");
    }
    if (!viewToken.isEmpty() && !protectMetrics) {
      throw v.invalidWithoutValue(VIEW_TOKEN, "needs " + PROTECT_METRICS.setTo(true));
    }
    if (!viewToken.isEmpty() && viewToken.equals(token)) {
      throw v.invalidWithoutValue(VIEW_TOKEN, "must differ from " + BEARER_TOKEN.name());
    }
    InboundAuthConfig config =
        new InboundAuthConfig(
            username, password, basicTenants, token, tokenFile, protectMetrics, viewToken);
    if (protectMetrics && !config.enabled() && viewToken.isEmpty()) {
      throw v.invalid(
          PROTECT_METRICS,
          "needs credentials: "
              + BASIC_AUTH_USERNAME.name()
              + ", "
              + BEARER_TOKEN.name()
              + ", "
              + BEARER_TOKEN_FILE.name()
              + " or "
              + VIEW_TOKEN.name());
    }
    return config;
  }

  private static String stripLineEnd(String s) {
    int end = s.length();
    while (end > 0 && (s.charAt(end - 1) == '\n' || s.charAt(end - 1) == '\r')) {
      end--;
    }
    return s.substring(0, end);
  }

  /** The kinds of credentials only: secrets never appear in a string form. */
  @Override
  public String toString() {
    if (!enabled()) {
      return viewToken.isEmpty() ? "none" : "view";
    }
    StringBuilder sb = new StringBuilder();
    if (!username.isEmpty()) {
      sb.append("basic");
    }
    if (!bearerToken.isEmpty() || bearerTokenFile != null) {
      sb.append(sb.length() > 0 ? "+" : "").append("bearer");
    }
    return sb.toString();
  }
}
