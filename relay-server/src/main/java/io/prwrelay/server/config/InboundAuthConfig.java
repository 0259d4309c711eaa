package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKeys.SERVER_AUTH_PROTECT_METRICS;
import static io.prwrelay.server.config.ConfigKeys.SERVER_AUTH_VIEW_TOKEN;
import static io.prwrelay.server.config.ConfigKeys.SERVER_BASIC_AUTH_PASSWORD;
import static io.prwrelay.server.config.ConfigKeys.SERVER_BASIC_AUTH_PASSWORD_FILE;
import static io.prwrelay.server.config.ConfigKeys.SERVER_BASIC_AUTH_TENANTS;
import static io.prwrelay.server.config.ConfigKeys.SERVER_BASIC_AUTH_USERNAME;
import static io.prwrelay.server.config.ConfigKeys.SERVER_BEARER_TOKEN;
import static io.prwrelay.server.config.ConfigKeys.SERVER_BEARER_TOKEN_FILE;

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

  /** Whether senders must present credentials at all. */
  public boolean enabled() {
    return !username.isEmpty() || !bearerToken.isEmpty() || bearerTokenFile != null;
  }

  static InboundAuthConfig load(ConfigValues v) throws ConfigException {
    String username = v.string(SERVER_BASIC_AUTH_USERNAME);
    String password = v.string(SERVER_BASIC_AUTH_PASSWORD);
    String passwordFile = v.string(SERVER_BASIC_AUTH_PASSWORD_FILE);
    if (!passwordFile.isEmpty()) {
      if (!password.isEmpty()) {
        throw v.invalid(
            SERVER_BASIC_AUTH_PASSWORD_FILE,
            "cannot be combined with " + SERVER_BASIC_AUTH_PASSWORD.name());
      }
      try {
        password = stripLineEnd(Files.readString(Path.of(passwordFile), StandardCharsets.UTF_8));
      } catch (IOException | RuntimeException e) {
        throw v.invalid(SERVER_BASIC_AUTH_PASSWORD_FILE, "cannot be read (" + e + ")");
      }
    }
    if (username.contains(":")) {
      throw v.invalid(SERVER_BASIC_AUTH_USERNAME, "must not contain ':'");
    }
    if (!username.isEmpty() && password.isEmpty()) {
      throw v.invalidWithoutValue(
          SERVER_BASIC_AUTH_USERNAME,
          "needs a password: "
              + SERVER_BASIC_AUTH_PASSWORD.name()
              + " or "
              + SERVER_BASIC_AUTH_PASSWORD_FILE.name());
    }
    if (username.isEmpty() && !password.isEmpty()) {
      throw v.invalidWithoutValue(
          SERVER_BASIC_AUTH_PASSWORD, "needs " + SERVER_BASIC_AUTH_USERNAME.name());
    }
    String tenants = v.string(SERVER_BASIC_AUTH_TENANTS);
    List<String> basicTenants =
        tenants.isEmpty()
            ? List.of()
            : Arrays.stream(tenants.split(","))
                .map(String::trim)
                .filter(t -> !t.isEmpty())
                .toList();
    if (!basicTenants.isEmpty() && username.isEmpty()) {
      throw v.invalid(SERVER_BASIC_AUTH_TENANTS, "needs " + SERVER_BASIC_AUTH_USERNAME.name());
    }
    String token = v.string(SERVER_BEARER_TOKEN);
    if (token.chars().anyMatch(c -> c <= 0x20 || c == 0x7F)) {
      throw v.invalidWithoutValue(
          SERVER_BEARER_TOKEN, "must not contain spaces or control characters");
    }
    String file = v.string(SERVER_BEARER_TOKEN_FILE);
    Path tokenFile = file.isEmpty() ? null : Path.of(file);
    if (tokenFile != null && !Files.isReadable(tokenFile)) {
      throw v.invalid(SERVER_BEARER_TOKEN_FILE, "file " + file + " is not readable");
    }
    boolean protectMetrics = v.bool(SERVER_AUTH_PROTECT_METRICS);
    String viewToken = v.string(SERVER_AUTH_VIEW_TOKEN);
    if (viewToken.chars().anyMatch(c -> c <= 0x20 || c == 0x7F)) {
      throw v.invalidWithoutValue(
          SERVER_AUTH_VIEW_TOKEN, "must not contain spaces or control characters");
    }
    if (!viewToken.isEmpty() && !protectMetrics) {
      throw v.invalidWithoutValue(
          SERVER_AUTH_VIEW_TOKEN, "needs " + SERVER_AUTH_PROTECT_METRICS.setTo(true));
    }
    if (!viewToken.isEmpty() && viewToken.equals(token)) {
      throw v.invalidWithoutValue(
          SERVER_AUTH_VIEW_TOKEN, "must differ from " + SERVER_BEARER_TOKEN.name());
    }
    InboundAuthConfig config =
        new InboundAuthConfig(
            username, password, basicTenants, token, tokenFile, protectMetrics, viewToken);
    if (protectMetrics && !config.enabled() && viewToken.isEmpty()) {
      throw v.invalid(
          SERVER_AUTH_PROTECT_METRICS,
          "needs credentials: "
              + SERVER_BASIC_AUTH_USERNAME.name()
              + ", "
              + SERVER_BEARER_TOKEN.name()
              + ", "
              + SERVER_BEARER_TOKEN_FILE.name()
              + " or "
              + SERVER_AUTH_VIEW_TOKEN.name());
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
