package io.prwrelay.server.ingress;

import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.prwrelay.server.config.FileStamp;
import io.prwrelay.server.config.InboundAuthConfig;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.write.Answer;
import io.prwrelay.server.write.TenantAllowList;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.logging.Logger;

/**
 * Checks the credentials of a request from its headers, before its body is read: basic auth against
 * the configured user, or a bearer token against the configured token and the tokens of the token
 * file (re-read by {@link #reloadIfChanged()} when it changes). Every comparison is of SHA-256
 * digests with {@link MessageDigest#isEqual}, and every known credential is compared, so the time
 * taken says nothing about which part of a guess was right. Secrets are never logged.
 *
 * <p>A request without valid credentials is answered 401 with a {@code WWW-Authenticate} challenge
 * and no detail; a valid one yields the {@link TenantAllowList} of its credential. The same list
 * says what the credential may read of {@code /metrics} and the tenant insight ({@link
 * #authenticateReader}); the view token ({@code relay.server.auth.view-token}) reads everything and
 * writes nothing.
 */
final class InboundAuth {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.server");

  /** Realm named in the challenges. */
  static final String REALM = "prw-relay";

  /** A credential: the digest of its secret and the tenants it may write. */
  private record Credential(byte[] digest, TenantAllowList tenants) {}

  private final InboundAuthConfig config;
  private final RelayMetrics metrics;
  private final byte[] userDigest;
  private final Credential basic;
  private final Credential token;
  private final Credential view;
  private volatile List<Credential> fileTokens = List.of();
  private FileStamp fileStamp;

  /**
   * @throws IOException naming {@code relay.server.bearer-token-file} when it cannot be read or
   *     parsed
   */
  InboundAuth(InboundAuthConfig config, RelayMetrics metrics) throws IOException {
    this.config = config;
    this.metrics = metrics;
    this.userDigest = config.username().isEmpty() ? null : digest(config.username());
    this.basic =
        config.username().isEmpty()
            ? null
            : credential(digest(config.password()), config.basicTenants());
    this.token =
        config.bearerToken().isEmpty() ? null : credential(digest(config.bearerToken()), List.of());
    this.view =
        config.viewToken().isEmpty() ? null : credential(digest(config.viewToken()), List.of());
    if (config.bearerTokenFile() != null) {
      fileStamp = FileStamp.of(List.of(config.bearerTokenFile()));
      try {
        fileTokens = readTokenFile(config.bearerTokenFile());
      } catch (IOException e) {
        throw new IOException(InboundAuthConfig.BEARER_TOKEN_FILE.name() + " " + e.getMessage(), e);
      }
    }
  }

  /** Whether requests need credentials at all. */
  boolean enabled() {
    return config.enabled();
  }

  /** Whether {@code GET /metrics} needs credentials. */
  boolean protectsMetrics() {
    return config.protectMetrics();
  }

  /**
   * The tenants the request's credentials may write, or {@code null} when they are missing or wrong
   * (answer with {@link #unauthorized()}). {@link TenantAllowList#ANY} when auth is off.
   */
  TenantAllowList authenticate(HttpHeaders headers) {
    if (!config.enabled()) {
      return TenantAllowList.ANY;
    }
    String authorization = headers.get(HttpHeaderNames.AUTHORIZATION);
    TenantAllowList found = null;
    if (authorization != null) {
      String value = authorization.trim();
      if (startsWithIgnoreCase(value, "Basic ") && basic != null) {
        found = checkBasic(value.substring(6).trim());
      } else if (startsWithIgnoreCase(value, "Bearer ")) {
        found = checkToken(value.substring(7).trim());
      }
    }
    if (found == null) {
      metrics.authRejected(401);
    }
    return found;
  }

  /**
   * The tenants whose rows and series the credentials of a request to {@code /metrics} or the
   * tenant insight may read ({@code relay.server.auth.protect-metrics}): every tenant for the view
   * token and for a writer of every tenant, a writer's own tenants otherwise; {@code null} when the
   * credentials are missing or wrong (answer with {@link #unauthorized()}).
   */
  TenantAllowList authenticateReader(HttpHeaders headers) {
    if (view != null) {
      String authorization = headers.get(HttpHeaderNames.AUTHORIZATION);
      String value = authorization == null ? "" : authorization.trim();
      if (startsWithIgnoreCase(value, "Bearer ")
          && MessageDigest.isEqual(view.digest(), digest(value.substring(7).trim()))) {
        return view.tenants();
      }
    }
    if (!config.enabled()) {
      // Only the view token reads: writes need no credentials, so none can stand for a writer.
      metrics.authRejected(401);
      return null;
    }
    return authenticate(headers);
  }

  private TenantAllowList checkBasic(String encoded) {
    String userPass;
    try {
      userPass = new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return null;
    }
    int colon = userPass.indexOf(':');
    if (colon < 0) {
      return null;
    }
    boolean user = MessageDigest.isEqual(userDigest, digest(userPass.substring(0, colon)));
    boolean password = MessageDigest.isEqual(basic.digest(), digest(userPass.substring(colon + 1)));
    return user & password ? basic.tenants() : null;
  }

  private TenantAllowList checkToken(String presented) {
    byte[] d = digest(presented);
    TenantAllowList found = null;
    if (token != null && MessageDigest.isEqual(token.digest(), d)) {
      found = token.tenants();
    }
    for (Credential c : fileTokens) {
      if (MessageDigest.isEqual(c.digest(), d) && found == null) {
        found = c.tenants();
      }
    }
    return found;
  }

  /** The 401 answer: a challenge for each kind of credential configured, no detail. */
  FullHttpResponse unauthorized() {
    FullHttpResponse r = AnswerWriter.toResponse(Answer.closing(401, "unauthorized"));
    if (basic != null) {
      r.headers().add(HttpHeaderNames.WWW_AUTHENTICATE, "Basic realm=\"" + REALM + "\"");
    }
    if (token != null || config.bearerTokenFile() != null || view != null) {
      r.headers().add(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"" + REALM + "\"");
    }
    return r;
  }

  /**
   * Re-reads the token file when its modification time or size changed; keeps the tokens it had
   * when the new file cannot be read or parsed. Runs off the event loops.
   */
  void reloadIfChanged() {
    Path file = config.bearerTokenFile();
    if (file == null) {
      return;
    }
    FileStamp now = FileStamp.of(List.of(file));
    if (now.equals(fileStamp)) {
      return;
    }
    fileStamp = now;
    try {
      List<Credential> tokens = readTokenFile(file);
      fileTokens = tokens;
      metrics.reloaded("bearer-token-file", true);
      LOG.info(
          InboundAuthConfig.BEARER_TOKEN_FILE.name()
              + " "
              + file
              + " re-read: "
              + tokens.size()
              + " tokens");
    } catch (IOException e) {
      metrics.reloaded("bearer-token-file", false);
      LOG.warning(
          InboundAuthConfig.BEARER_TOKEN_FILE.name()
              + " "
              + file
              + " changed but cannot be used, keeping the previous tokens: "
              + e.getMessage());
    }
  }

  /**
   * Reads {@code token} or {@code token tenant1,tenant2} lines; blank lines and {@code #} comments
   * are skipped.
   *
   * @throws IOException naming the line (never its content) of a malformed entry
   */
  private static List<Credential> readTokenFile(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    List<Credential> tokens = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] parts = line.split("\\s+");
      if (parts.length > 2 || parts[0].chars().anyMatch(c -> c < 0x21 || c == 0x7F)) {
        throw new IOException("line " + (i + 1) + ": expected 'token' or 'token tenant1,tenant2'");
      }
      List<String> tenants =
          parts.length == 1
              ? List.of()
              : Arrays.stream(parts[1].split(",")).filter(t -> !t.isEmpty()).toList();
      tokens.add(credential(digest(parts[0]), tenants));
    }
    return List.copyOf(tokens);
  }

  /**
   * A credential whose {@link TenantAllowList#credential() identity} is the first 8 bytes of its
   * secret's digest (never 0): the same secret is the same sender after the token file is re-read.
   */
  private static Credential credential(byte[] digest, List<String> tenants) {
    long identity = 0;
    for (int i = 0; i < 8; i++) {
      identity = identity << 8 | (digest[i] & 0xFF);
    }
    return new Credential(digest, TenantAllowList.of(tenants, identity == 0 ? 1 : identity));
  }

  private static boolean startsWithIgnoreCase(String s, String prefix) {
    return s.regionMatches(true, 0, prefix, 0, prefix.length());
  }

  private static byte[] digest(String secret) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
