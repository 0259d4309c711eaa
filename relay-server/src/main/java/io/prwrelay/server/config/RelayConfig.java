package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;
import static io.prwrelay.server.config.ConfigKey.secret;

import io.prwrelay.core.route.TenantIds;
import io.prwrelay.core.route.TenantProblem;
import io.prwrelay.core.route.TenantRules;
import java.io.IOException;
import java.io.Reader;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The relay's configuration: immutable, validated once at startup.
 *
 * <p>Every key can come from a {@code -Dkey=value} system property, an environment variable ({@code
 * relay.downstream.url} → {@code RELAY_DOWNSTREAM_URL}), or a properties file given with {@code
 * --config}; the first of these that sets a key wins, then the default. An unknown {@code relay.*}
 * key in the file or in system properties, or a value that does not parse, stops startup with a
 * message naming the key. Secrets (passwords, tokens) are never part of {@link #describe()}.
 */
public final class RelayConfig {
  /** Every key, its default and its meaning, in the order {@code --help} prints them. */
  public static final List<ConfigKey> KEYS =
      List.of(
          key("relay.server.host", "0.0.0.0", "ingress listen address"),
          key("relay.server.port", "8080", "ingress listen port (0 = any free port)"),
          key(
              "relay.server.max-request-bytes",
              "33554432",
              "largest compressed request body; larger bodies get 413"),
          key(
              "relay.server.max-decompressed-bytes",
              "134217728",
              "largest decompressed request; larger requests get 400"),
          key(
              "relay.server.read-timeout",
              "30s",
              "time allowed to receive one whole request; slower senders get 408 and are disconnected"),
          key(
              "relay.server.idle-timeout",
              "5m",
              "idle keep-alive connections are closed after this long without a request"),
          key(
              "relay.server.io-threads",
              "0",
              "event loop threads for ingress and egress (0 = number of CPUs)"),
          key(
              "relay.downstream.url",
              "http://127.0.0.1:9009/api/v1/push",
              "Cortex/Mimir push URL (http or https); {tenant} in it is replaced by the tenant ID"),
          key("relay.downstream.tenant-header", "X-Scope-OrgID", "header carrying the tenant ID"),
          key(
              "relay.downstream.timeout",
              "10s",
              "deadline for delivering one sender request to every tenant, retries included"),
          key(
              "relay.downstream.attempt-timeout",
              "5s",
              "deadline for one downstream attempt (connect + response), within the overall deadline"),
          key("relay.downstream.connect-timeout", "2s", "TCP (and TLS) connect timeout"),
          key(
              "relay.downstream.max-connections",
              "64",
              "pooled keep-alive connections to the downstream host, across all event loops"),
          key(
              "relay.downstream.max-concurrent-sends",
              "16",
              "tenant batches of one sender request in flight at once"),
          key(
              "relay.downstream.retry.initial-backoff",
              "100ms",
              "first retry delay (doubles per attempt, with jitter)"),
          key(
              "relay.downstream.retry.max-backoff",
              "2s",
              "largest retry delay (Retry-After may ask for more)"),
          key("relay.downstream.basic-auth.username", "", "basic auth user for the downstream"),
          secret("relay.downstream.basic-auth.password", "basic auth password (never logged)"),
          secret(
              "relay.downstream.bearer-token",
              "bearer token for the downstream (never logged); excludes basic auth"),
          key(
              "relay.downstream.tls.ca-file",
              "",
              "PEM file of CA certificates trusted for an https downstream (default: the JVM's)"),
          key(
              "relay.downstream.tls.insecure-skip-verify",
              "false",
              "accept any downstream certificate (testing only)"),
          key(
              "relay.tenant.labels",
              TenantRules.DEFAULT_LABEL,
              "comma-separated tenant labels; the first one present (in this order) wins"),
          key(
              "relay.tenant.missing",
              "default",
              "series without a valid tenant: default, drop or reject (the request, with 400)"),
          key(
              "relay.tenant.default",
              TenantRules.DEFAULT_TENANT,
              "tenant for such series under default"),
          key("relay.tenant.remove-label", "false", "strip the tenant label before forwarding"),
          key("relay.tenant.prefix", "", "prepended to every tenant ID"),
          key(
              "relay.tenant.trust-incoming-header",
              "false",
              "when a request carries the tenant header, send it whole to that tenant"),
          key(
              "relay.tenant.max-cached",
              String.valueOf(TenantRules.DEFAULT_MAX_CACHED_TENANTS),
              "distinct tenant values remembered per event loop before the cache starts over"),
          key(
              "relay.metadata",
              "broadcast",
              "metadata: broadcast (to every tenant of the request) or drop"),
          key(
              "relay.metrics.max-tenants",
              "100",
              "top tenants by volume that get their own metric series; the rest are counted as tenant=\"other\""),
          key(
              "relay.log.failure-interval",
              "10s",
              "at most one log line per tenant and failure kind per interval"));

  private static final Map<String, ConfigKey> BY_NAME = new LinkedHashMap<>();

  static {
    for (ConfigKey k : KEYS) {
      BY_NAME.put(k.name(), k);
    }
  }

  private final String serverHost;
  private final int serverPort;
  private final int maxRequestBytes;
  private final int maxDecompressedBytes;
  private final Duration readTimeout;
  private final Duration idleTimeout;
  private final int ioThreads;
  private final URI downstreamUrl;
  private final String tenantHeader;
  private final Duration downstreamTimeout;
  private final Duration attemptTimeout;
  private final Duration connectTimeout;
  private final int maxConnections;
  private final int maxConcurrentSends;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final String basicAuthUsername;
  private final String basicAuthPassword;
  private final String bearerToken;
  private final Path tlsCaFile;
  private final boolean tlsInsecureSkipVerify;
  private final TenantRules tenantRules;
  private final boolean trustIncomingHeader;
  private final int metricsMaxTenants;
  private final Duration failureLogInterval;

  private RelayConfig(Values v) throws ConfigException {
    serverHost = v.string("relay.server.host");
    if (serverHost.isEmpty()) {
      throw v.invalid("relay.server.host", "must not be empty");
    }
    serverPort = v.integer("relay.server.port", 0, 65535);
    maxRequestBytes = v.integer("relay.server.max-request-bytes", 1, Integer.MAX_VALUE - 8);
    maxDecompressedBytes =
        v.integer("relay.server.max-decompressed-bytes", 1, Integer.MAX_VALUE - 8);
    readTimeout = v.duration("relay.server.read-timeout");
    idleTimeout = v.duration("relay.server.idle-timeout");
    ioThreads = v.integer("relay.server.io-threads", 0, 1024);
    downstreamUrl = v.url("relay.downstream.url");
    tenantHeader = v.string("relay.downstream.tenant-header");
    if (!tenantHeader.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]+")) {
      throw v.invalid("relay.downstream.tenant-header", "is not a valid HTTP header name");
    }
    downstreamTimeout = v.duration("relay.downstream.timeout");
    attemptTimeout = v.duration("relay.downstream.attempt-timeout");
    connectTimeout = v.duration("relay.downstream.connect-timeout");
    maxConnections = v.integer("relay.downstream.max-connections", 1, 100_000);
    maxConcurrentSends = v.integer("relay.downstream.max-concurrent-sends", 1, 100_000);
    initialBackoff = v.duration("relay.downstream.retry.initial-backoff");
    maxBackoff = v.duration("relay.downstream.retry.max-backoff");
    if (maxBackoff.compareTo(initialBackoff) < 0) {
      throw v.invalid(
          "relay.downstream.retry.max-backoff",
          "must not be less than relay.downstream.retry.initial-backoff");
    }
    basicAuthUsername = v.string("relay.downstream.basic-auth.username");
    basicAuthPassword = v.string("relay.downstream.basic-auth.password");
    bearerToken = v.string("relay.downstream.bearer-token");
    if (!bearerToken.isEmpty() && !basicAuthUsername.isEmpty()) {
      throw v.invalid(
          "relay.downstream.bearer-token",
          "cannot be combined with relay.downstream.basic-auth.username");
    }
    if (basicAuthUsername.contains(":")) {
      throw v.invalid("relay.downstream.basic-auth.username", "must not contain ':'");
    }
    if (!basicAuthPassword.isEmpty() && basicAuthUsername.isEmpty()) {
      throw v.invalid(
          "relay.downstream.basic-auth.password", "needs relay.downstream.basic-auth.username");
    }
    for (String secret : List.of(basicAuthUsername, basicAuthPassword, bearerToken)) {
      if (secret.chars().anyMatch(c -> c < 0x20 || c == 0x7F)) {
        throw v.invalid("relay.downstream credentials", "must not contain control characters");
      }
    }
    String ca = v.string("relay.downstream.tls.ca-file");
    tlsCaFile = ca.isEmpty() ? null : Path.of(ca);
    if (tlsCaFile != null && !Files.isReadable(tlsCaFile)) {
      throw v.invalid("relay.downstream.tls.ca-file", "file " + ca + " is not readable");
    }
    tlsInsecureSkipVerify = v.bool("relay.downstream.tls.insecure-skip-verify");
    trustIncomingHeader = v.bool("relay.tenant.trust-incoming-header");
    metricsMaxTenants = v.integer("relay.metrics.max-tenants", 0, 100_000);
    failureLogInterval = v.duration("relay.log.failure-interval");
    tenantRules = tenantRules(v);
  }

  private static TenantRules tenantRules(Values v) throws ConfigException {
    List<String> labels = new ArrayList<>();
    for (String l : v.string("relay.tenant.labels").split(",")) {
      if (!l.isBlank()) {
        labels.add(l.trim());
      }
    }
    TenantRules.Builder b =
        TenantRules.builder()
            .labels(labels)
            .missing(v.choice("relay.tenant.missing", TenantRules.MissingPolicy.class))
            .defaultTenant(v.string("relay.tenant.default"))
            .prefix(v.string("relay.tenant.prefix"))
            .removeLabel(v.bool("relay.tenant.remove-label"))
            .metadata(v.choice("relay.metadata", TenantRules.MetadataPolicy.class))
            .maxCachedTenants(v.integer("relay.tenant.max-cached", 1, 100_000_000));
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      String msg = e.getMessage();
      String setting = msg.substring(0, msg.indexOf(':'));
      String keyName =
          setting.equals("default") ? "relay.tenant.default" : "relay.tenant." + setting;
      throw new ConfigException(keyName + msg.substring(msg.indexOf(':')));
    }
  }

  /** Loads the configuration with the defaults only (used by tests and the demo). */
  public static RelayConfig defaults() throws ConfigException {
    return load(null, Map.of(), Map.of());
  }

  /**
   * Loads and validates the configuration.
   *
   * @param file properties file, or {@code null}
   * @param systemProperties {@code -D} values (only {@code relay.*} keys are looked at)
   * @param environment environment variables (only those of known keys are looked at)
   * @throws ConfigException naming the key of the first problem found
   */
  public static RelayConfig load(
      Path file, Map<String, String> systemProperties, Map<String, String> environment)
      throws ConfigException {
    Map<String, String> fromFile = new LinkedHashMap<>();
    if (file != null) {
      Properties p = new Properties();
      try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
        p.load(r);
      } catch (IOException e) {
        throw new ConfigException("--config " + file + ": cannot read (" + e.getMessage() + ")");
      }
      for (String name : p.stringPropertyNames()) {
        fromFile.put(name, p.getProperty(name));
      }
      rejectUnknown(fromFile.keySet(), "in " + file, false);
    }
    rejectUnknown(systemProperties.keySet(), "as a -D system property", true);
    Map<String, String> values = new LinkedHashMap<>();
    Map<String, String> sources = new LinkedHashMap<>();
    for (ConfigKey k : KEYS) {
      String value;
      String source;
      if (systemProperties.containsKey(k.name())) {
        value = systemProperties.get(k.name());
        source = "-D" + k.name();
      } else if (environment.containsKey(k.environmentVariable())) {
        value = environment.get(k.environmentVariable());
        source = "environment variable " + k.environmentVariable();
      } else if (fromFile.containsKey(k.name())) {
        value = fromFile.get(k.name());
        source = file.toString();
      } else {
        value = k.defaultValue();
        source = "default";
      }
      values.put(k.name(), value.trim());
      sources.put(k.name(), source);
    }
    return new RelayConfig(new Values(values, sources));
  }

  /**
   * Environment variables that look like relay keys but match none; callers log them as warnings.
   */
  public static List<String> unknownEnvironmentVariables(Map<String, String> environment) {
    TreeSet<String> known = new TreeSet<>();
    for (ConfigKey k : KEYS) {
      known.add(k.environmentVariable());
    }
    List<String> unknown = new ArrayList<>();
    for (String name : new TreeSet<>(environment.keySet())) {
      if (name.startsWith("RELAY_") && !known.contains(name)) {
        unknown.add(name);
      }
    }
    return unknown;
  }

  private static void rejectUnknown(Iterable<String> names, String where, boolean relayOnly)
      throws ConfigException {
    for (String name : names) {
      if (relayOnly && !name.startsWith("relay.")) {
        continue;
      }
      if (!BY_NAME.containsKey(name)) {
        throw new ConfigException(
            "unknown key " + name + " " + where + suggestion(name) + " (see --help for every key)");
      }
    }
  }

  private static String suggestion(String name) {
    String best = null;
    int bestDistance = 4;
    for (String known : BY_NAME.keySet()) {
      int d = distance(name, known);
      if (d < bestDistance) {
        bestDistance = d;
        best = known;
      }
    }
    return best == null ? "" : "; did you mean " + best + "?";
  }

  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }

  /** The text {@code --help} prints: usage and every key with its default and meaning. */
  public static String help() {
    StringBuilder sb = new StringBuilder();
    sb.append(
        "Usage: java -jar prw-relay.jar [--config relay.properties] [--demo] [--help] [--version]\n\n");
    sb.append(
        "Every key can be set with -Dkey=value, an environment variable (shown below), or the\n");
    sb.append("properties file, in that order of precedence; otherwise the default applies.\n\n");
    for (ConfigKey k : KEYS) {
      sb.append(k.name())
          .append(" (")
          .append(k.environmentVariable())
          .append(")\n    default: ")
          .append(k.secret() ? "(none)" : k.defaultValue().isEmpty() ? "(empty)" : k.defaultValue())
          .append("\n    ")
          .append(k.meaning())
          .append('\n');
    }
    return sb.toString();
  }

  /** A one-line summary for the startup log; secrets are shown only as set or not. */
  public String describe() {
    return "listen="
        + serverHost
        + ":"
        + serverPort
        + " downstream="
        + redactedUrl()
        + " tenant-header="
        + tenantHeader
        + " tenant-labels="
        + String.join(",", tenantRules.labels())
        + " missing="
        + tenantRules.missing().name().toLowerCase(Locale.ROOT)
        + " default-tenant="
        + tenantRules.defaultTenantId()
        + " auth="
        + (!bearerToken.isEmpty() ? "bearer" : !basicAuthUsername.isEmpty() ? "basic" : "none");
  }

  private String redactedUrl() {
    URI u = downstreamUrl;
    return u.getScheme()
        + "://"
        + u.getHost()
        + (u.getPort() < 0 ? "" : ":" + u.getPort())
        + u.getRawPath();
  }

  public String serverHost() {
    return serverHost;
  }

  public int serverPort() {
    return serverPort;
  }

  public int maxRequestBytes() {
    return maxRequestBytes;
  }

  public int maxDecompressedBytes() {
    return maxDecompressedBytes;
  }

  public Duration readTimeout() {
    return readTimeout;
  }

  public Duration idleTimeout() {
    return idleTimeout;
  }

  public int ioThreads() {
    return ioThreads;
  }

  public URI downstreamUrl() {
    return downstreamUrl;
  }

  public String tenantHeader() {
    return tenantHeader;
  }

  public Duration downstreamTimeout() {
    return downstreamTimeout;
  }

  public Duration attemptTimeout() {
    return attemptTimeout;
  }

  public Duration connectTimeout() {
    return connectTimeout;
  }

  public int maxConnections() {
    return maxConnections;
  }

  public int maxConcurrentSends() {
    return maxConcurrentSends;
  }

  public Duration initialBackoff() {
    return initialBackoff;
  }

  public Duration maxBackoff() {
    return maxBackoff;
  }

  public Optional<String> basicAuthUsername() {
    return basicAuthUsername.isEmpty() ? Optional.empty() : Optional.of(basicAuthUsername);
  }

  public String basicAuthPassword() {
    return basicAuthPassword;
  }

  public Optional<String> bearerToken() {
    return bearerToken.isEmpty() ? Optional.empty() : Optional.of(bearerToken);
  }

  public Optional<Path> tlsCaFile() {
    return Optional.ofNullable(tlsCaFile);
  }

  public boolean tlsInsecureSkipVerify() {
    return tlsInsecureSkipVerify;
  }

  public TenantRules tenantRules() {
    return tenantRules;
  }

  public boolean trustIncomingHeader() {
    return trustIncomingHeader;
  }

  public int metricsMaxTenants() {
    return metricsMaxTenants;
  }

  public Duration failureLogInterval() {
    return failureLogInterval;
  }

  /** Raw values with their sources, parsed on demand with errors naming key and source. */
  private static final class Values {
    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)");
    private final Map<String, String> values;
    private final Map<String, String> sources;

    Values(Map<String, String> values, Map<String, String> sources) {
      this.values = values;
      this.sources = sources;
    }

    String string(String key) {
      return values.get(key);
    }

    ConfigException invalid(String key, String problem) {
      String source = sources.getOrDefault(key, "");
      boolean secret = BY_NAME.containsKey(key) && BY_NAME.get(key).secret();
      String shown = secret || !values.containsKey(key) ? "" : " '" + values.get(key) + "'";
      return new ConfigException(
          key + shown + " " + problem + (source.isEmpty() ? "" : " (from " + source + ")"));
    }

    int integer(String key, int min, int max) throws ConfigException {
      long v;
      try {
        v = Long.parseLong(string(key));
      } catch (NumberFormatException e) {
        throw invalid(key, "is not a whole number");
      }
      if (v < min || v > max) {
        throw invalid(key, "must be between " + min + " and " + max);
      }
      return (int) v;
    }

    boolean bool(String key) throws ConfigException {
      String s = string(key).toLowerCase(Locale.ROOT);
      if (s.equals("true")) {
        return true;
      }
      if (s.equals("false")) {
        return false;
      }
      throw invalid(key, "must be true or false");
    }

    Duration duration(String key) throws ConfigException {
      Matcher m = DURATION.matcher(string(key));
      if (!m.matches()) {
        throw invalid(key, "is not a duration like 500ms, 10s, 5m or 1h");
      }
      long n = Long.parseLong(m.group(1));
      Duration d;
      switch (m.group(2)) {
        case "ms":
          d = Duration.ofMillis(n);
          break;
        case "s":
          d = Duration.ofSeconds(n);
          break;
        case "m":
          d = Duration.ofMinutes(n);
          break;
        default:
          d = Duration.ofHours(n);
      }
      if (d.isZero()) {
        throw invalid(key, "must be greater than zero");
      }
      return d;
    }

    <E extends Enum<E>> E choice(String key, Class<E> type) throws ConfigException {
      String s = string(key);
      for (E e : type.getEnumConstants()) {
        if (e.name().equalsIgnoreCase(s)) {
          return e;
        }
      }
      throw invalid(
          key,
          "must be one of "
              + Arrays.stream(type.getEnumConstants())
                  .map(e -> e.name().toLowerCase(Locale.ROOT))
                  .reduce((a, b) -> a + ", " + b)
                  .orElse(""));
    }

    URI url(String key) throws ConfigException {
      URI u;
      try {
        u = new URI(string(key).replace("{tenant}", "TENANT_PLACEHOLDER"));
      } catch (URISyntaxException e) {
        throw invalid(key, "is not a URL (" + e.getReason() + ")");
      }
      String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
      if (!scheme.equals("http") && !scheme.equals("https")) {
        throw invalid(key, "must start with http:// or https://");
      }
      if (u.getHost() == null || u.getHost().contains("TENANT_PLACEHOLDER")) {
        throw invalid(key, "must name a host (and {tenant} may appear only in the path or query)");
      }
      if (u.getRawUserInfo() != null) {
        throw invalid(key, "must not carry credentials; use relay.downstream.basic-auth.*");
      }
      try {
        return new URI(string(key).replace("{tenant}", "%7Btenant%7D"));
      } catch (URISyntaxException e) {
        throw invalid(key, "is not a URL (" + e.getReason() + ")");
      }
    }
  }

  /**
   * Whether a tenant ID from the incoming tenant header is acceptable downstream (after the
   * prefix).
   */
  public boolean isValidIncomingTenant(String value) {
    TenantProblem p = TenantIds.problem(tenantRules.prefix() + value);
    return p == null;
  }
}
