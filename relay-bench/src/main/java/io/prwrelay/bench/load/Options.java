package io.prwrelay.bench.load;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Command line options of the load generator, parsed and validated. Every option takes the form
 * {@code --name value} or {@code --name=value}; {@link #help()} lists them with their defaults.
 */
public final class Options {
  /** The relay jar spawned when neither {@code --relay-url} nor {@code --spawn-relay} is given. */
  public static final Path DEFAULT_RELAY_JAR = Path.of("relay-server/target/prw-relay.jar");

  /** The sink port used with {@code --relay-url}: the relay's default downstream is port 9009. */
  public static final int EXTERNAL_SINK_PORT = 9009;

  /** Body compression of the generated requests. */
  public enum Encoding {
    SNAPPY,
    ZSTD;

    /** The {@code Content-Encoding} header value. */
    public String header() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Thrown for an unknown option or a value that does not parse or is out of range. */
  public static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  private int connections = 4;
  private double rate = 0;
  private Duration duration = Duration.ofSeconds(20);
  private long requests = 0;
  private Duration warmup = Duration.ofSeconds(5);
  private Duration timeout = Duration.ofSeconds(30);
  private int threads = 1;
  private int seriesPerRequest = 2000;
  private int tenants = 10;
  private int labels = 8;
  private String tenantLabel = "service_id";
  private Encoding encoding = Encoding.SNAPPY;
  private int poolSize = 64;
  private long seed = 42;
  private URI relayUrl;
  private Path spawnRelay;
  private List<String> jvmArgs = List.of();
  private int sinkPort = -1;
  private boolean waitForEnter;
  private boolean help;

  private Options() {}

  /**
   * Parses a command line.
   *
   * @throws UsageException naming the offending option
   */
  public static Options parse(String... args) throws UsageException {
    Options o = new Options();
    boolean spawnGiven = false;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("--help") || arg.equals("-h")) {
        o.help = true;
        continue;
      }
      if (arg.equals("--wait")) {
        o.waitForEnter = true;
        continue;
      }
      if (!arg.startsWith("--")) {
        throw new UsageException("unexpected argument '" + arg + "'");
      }
      String name;
      String value;
      int eq = arg.indexOf('=');
      if (eq > 0) {
        name = arg.substring(0, eq);
        value = arg.substring(eq + 1);
      } else {
        name = arg;
        if (i + 1 == args.length) {
          throw new UsageException(name + " needs a value");
        }
        value = args[++i];
      }
      switch (name) {
        case "--connections":
          o.connections = intValue(name, value, 1, 10_000);
          break;
        case "--rate":
          o.rate = rateValue(name, value);
          break;
        case "--duration":
          o.duration = durationValue(name, value);
          if (o.duration.isZero()) {
            throw new UsageException("--duration must be more than 0");
          }
          break;
        case "--requests":
          o.requests = longValue(name, value, 1, Long.MAX_VALUE);
          break;
        case "--warmup":
          o.warmup = durationValue(name, value);
          break;
        case "--timeout":
          o.timeout = durationValue(name, value);
          if (o.timeout.toMillis() < 1) {
            throw new UsageException("--timeout must be at least 1ms");
          }
          break;
        case "--threads":
          o.threads = intValue(name, value, 1, 256);
          break;
        case "--series-per-request":
          o.seriesPerRequest = intValue(name, value, 1, 1_000_000);
          break;
        case "--tenants":
          o.tenants = intValue(name, value, 1, 100_000);
          break;
        case "--labels":
          o.labels = intValue(name, value, 2, 100);
          break;
        case "--tenant-label":
          if (value.isEmpty() || !value.matches("[a-zA-Z_][a-zA-Z0-9_]*")) {
            throw new UsageException(
                "--tenant-label '" + value + "' is not a Prometheus label name");
          }
          if (value.equals("__name__")) {
            throw new UsageException("--tenant-label cannot be __name__");
          }
          o.tenantLabel = value;
          break;
        case "--encoding":
          o.encoding = encodingValue(value);
          break;
        case "--protocol":
          protocolValue(value);
          break;
        case "--pool":
          o.poolSize = intValue(name, value, 1, 100_000);
          break;
        case "--seed":
          o.seed = longValue(name, value, Long.MIN_VALUE, Long.MAX_VALUE);
          break;
        case "--relay-url":
          o.relayUrl = loopbackUrl(value);
          break;
        case "--spawn-relay":
          o.spawnRelay = Path.of(value);
          spawnGiven = true;
          break;
        case "--jvm-args":
          o.jvmArgs = value.isBlank() ? List.of() : List.of(value.trim().split("\\s+"));
          break;
        case "--sink-port":
          o.sinkPort = intValue(name, value, 0, 65535);
          break;
        default:
          throw new UsageException("unknown option " + name);
      }
    }
    if (o.help) {
      return o;
    }
    if (o.relayUrl != null && spawnGiven) {
      throw new UsageException("give either --relay-url or --spawn-relay, not both");
    }
    if (o.relayUrl == null) {
      if (!spawnGiven) {
        o.spawnRelay = DEFAULT_RELAY_JAR;
      }
      if (!Files.isRegularFile(o.spawnRelay)) {
        throw new UsageException(
            (spawnGiven ? "--spawn-relay " : "no --relay-url given and the default relay jar ")
                + o.spawnRelay
                + " does not exist (build it with 'mvn package -DskipTests', run from the"
                + " repository root, or give --relay-url of a running relay)");
      }
    }
    if (o.relayUrl == null && o.waitForEnter) {
      throw new UsageException("--wait needs --relay-url (a spawned relay is configured for you)");
    }
    if (o.sinkPort < 0) {
      o.sinkPort = o.relayUrl == null ? 0 : EXTERNAL_SINK_PORT;
    }
    if (o.relayUrl != null && !o.jvmArgs.isEmpty()) {
      throw new UsageException("--jvm-args applies only to a spawned relay, not with --relay-url");
    }
    return o;
  }

  /** The usage text: every option with its default. */
  public static String help() {
    return String.join(
        "\n",
        "usage: java -jar relay-bench/target/loadgen.jar [options]",
        "",
        "Drives a prw-relay over loopback HTTP with mixed-tenant PRW 1.0 requests. A built-in",
        "downstream (the sink) counts the series each tenant receives; the summary reports",
        "throughput, latency and errors, and for a spawned relay its CPU time and GC pauses.",
        "Exit code 0 when every request was accepted and every tenant received exactly the",
        "series sent for it, 1 otherwise, 2 for a usage error.",
        "",
        "relay (one of):",
        "  --spawn-relay JAR         start this relay jar as a child process on 127.0.0.1 with the",
        "                            sink as downstream (default: " + DEFAULT_RELAY_JAR + ",",
        "                            when it exists and --relay-url is not given)",
        "  --relay-url URL           a running relay on loopback (127.0.0.0/8, ::1, localhost),",
        "                            e.g. http://127.0.0.1:8080/api/v1/write; its",
        "                            relay.downstream.url must point at the sink",
        "  --jvm-args \"ARGS\"         JVM options of the spawned relay, e.g. \"-Xmx512m",
        "                            -Drelay.server.io-threads=1\" (default: none). -Drelay.*",
        "                            there and RELAY_* variables configure it further; host,",
        "                            port and downstream are always set, relay.tenant.labels",
        "                            to --tenant-label unless --jvm-args sets it",
        "  --sink-port PORT          sink port on 127.0.0.1 (default: any free port when spawning;",
        "                            "
            + EXTERNAL_SINK_PORT
            + " with --relay-url, the relay's default downstream port)",
        "  --wait                    with --relay-url: print the sink URL, then wait for Enter",
        "",
        "load:",
        "  --connections N           keep-alive HTTP/1.1 connections, one request in flight on",
        "                            each (default 4)",
        "  --rate R                  requests/s over all connections; 0 = each connection sends",
        "                            its next request when the answer arrives (default 0)",
        "  --duration D              measured time, after warm-up (default 20s)",
        "  --requests N              stop after N measured requests (default: no limit; the",
        "                            duration still applies)",
        "  --warmup D                time sent before measuring, not counted (default 5s)",
        "  --timeout D               time allowed for one answer (default 30s)",
        "  --threads N               event loop threads of the sender and of the sink (default 1",
        "                            each)",
        "",
        "requests:",
        "  --series-per-request N    series in each request (default 2000)",
        "  --tenants N               tenant values, spread at random over the series (default 10)",
        "  --labels N                labels per series, __name__ and the tenant label included",
        "                            (default 8)",
        "  --tenant-label NAME       label carrying the tenant; a spawned relay gets it as",
        "                            relay.tenant.labels (default service_id)",
        "  --encoding snappy|zstd    body compression (default snappy)",
        "  --protocol v1             remote-write protocol: v1 = PRW 1.0, the only one supported",
        "                            (default v1)",
        "  --pool N                  distinct request bodies generated before the run and sent",
        "                            round-robin (default 64)",
        "  --seed N                  random seed of the generated bodies (default 42)",
        "",
        "  --help                    this text",
        "",
        "Durations take a unit: 500ms, 20s, 2m, 1h.",
        "");
  }

  private static int intValue(String name, String value, int min, int max) throws UsageException {
    return (int) longValue(name, value, min, max);
  }

  private static long longValue(String name, String value, long min, long max)
      throws UsageException {
    long v;
    try {
      v = Long.parseLong(value.replace("_", ""));
    } catch (NumberFormatException e) {
      throw new UsageException(name + " '" + value + "' is not a whole number");
    }
    if (v < min || v > max) {
      throw new UsageException(
          name + " " + v + " is out of range " + min + ".." + (max == Long.MAX_VALUE ? "" : max));
    }
    return v;
  }

  private static double rateValue(String name, String value) throws UsageException {
    double v;
    try {
      v = Double.parseDouble(value);
    } catch (NumberFormatException e) {
      throw new UsageException(name + " '" + value + "' is not a number");
    }
    if (!(v >= 0) || Double.isInfinite(v)) {
      throw new UsageException(name + " must be 0 (as fast as possible) or a positive rate");
    }
    return v;
  }

  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)");

  /** Parses {@code 500ms}, {@code 20s}, {@code 2m}, {@code 1h}. */
  static Duration durationValue(String name, String value) throws UsageException {
    Matcher m = DURATION.matcher(value.trim());
    if (!m.matches()) {
      throw new UsageException(
          name + " '" + value + "' is not a duration: use a number and a unit, e.g. 500ms or 20s");
    }
    long n;
    try {
      n = Long.parseLong(m.group(1));
    } catch (NumberFormatException e) {
      throw new UsageException(name + " '" + value + "' is too large");
    }
    switch (m.group(2)) {
      case "ms":
        return Duration.ofMillis(n);
      case "s":
        return Duration.ofSeconds(n);
      case "m":
        return Duration.ofMinutes(n);
      default:
        return Duration.ofHours(n);
    }
  }

  private static Encoding encodingValue(String value) throws UsageException {
    switch (value.toLowerCase(Locale.ROOT)) {
      case "snappy":
        return Encoding.SNAPPY;
      case "zstd":
        return Encoding.ZSTD;
      default:
        throw new UsageException("--encoding '" + value + "' must be snappy or zstd");
    }
  }

  private static void protocolValue(String value) throws UsageException {
    switch (value.toLowerCase(Locale.ROOT)) {
      case "v1":
      case "1":
      case "1.0":
        return;
      case "v2":
      case "2":
      case "2.0":
        throw new UsageException(
            "--protocol v2 (PRW 2.0) is not supported: the relay and this generator speak PRW 1.0"
                + " only; use --protocol v1");
      default:
        throw new UsageException("--protocol '" + value + "' must be v1");
    }
  }

  /**
   * Parses a relay URL and refuses any host outside loopback: a load test must never reach another
   * machine. Host names other than {@code localhost} are refused without being resolved.
   */
  static URI loopbackUrl(String value) throws UsageException {
    URI uri;
    try {
      uri = new URI(value);
    } catch (URISyntaxException e) {
      throw new UsageException("--relay-url '" + value + "' is not a URL: " + e.getMessage());
    }
    if (!"http".equalsIgnoreCase(uri.getScheme())) {
      throw new UsageException("--relay-url '" + value + "' must start with http://");
    }
    String host = uri.getHost();
    if (host == null || uri.getPort() == 0 || uri.getPort() > 65535) {
      throw new UsageException("--relay-url '" + value + "' needs a host and a valid port");
    }
    if (!isLoopback(host)) {
      throw new UsageException(
          "--relay-url host "
              + host
              + " is not a loopback address: only 127.0.0.0/8, ::1 and localhost are allowed");
    }
    if (uri.getPath() == null || uri.getPath().isEmpty()) {
      try {
        uri =
            new URI(
                uri.getScheme(), null, uri.getHost(), uri.getPort(), "/api/v1/write", null, null);
      } catch (URISyntaxException e) {
        throw new UsageException("--relay-url '" + value + "': " + e.getMessage());
      }
    }
    return uri;
  }

  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

  static boolean isLoopback(String host) {
    String h =
        host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (h.equalsIgnoreCase("localhost")) {
      return true;
    }
    if (!IPV4.matcher(h).matches() && !h.contains(":")) {
      return false;
    }
    try {
      return InetAddress.getByName(h).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  /** The options as they would be typed, for the report header. */
  public String describe() {
    List<String> parts = new ArrayList<>();
    parts.add(connections + " connections");
    parts.add(rate == 0 ? "max rate" : "rate " + formatRate(rate) + "/s");
    parts.add(
        seriesPerRequest
            + " series/request over "
            + tenants
            + " tenants ("
            + tenantLabel
            + "), "
            + labels
            + " labels/series");
    parts.add(encoding.header());
    parts.add(poolSize + " distinct bodies");
    return String.join(", ", parts);
  }

  private static String formatRate(double r) {
    return r == Math.rint(r) ? Long.toString((long) r) : Double.toString(r);
  }

  /** {@code --help} was given: print {@link #help()} and do nothing else. */
  public boolean helpRequested() {
    return help;
  }

  public int connections() {
    return connections;
  }

  /** Requests per second over all connections; 0 for max-rate mode. */
  public double rate() {
    return rate;
  }

  public Duration duration() {
    return duration;
  }

  /** Cap on measured requests; 0 for none. */
  public long requests() {
    return requests;
  }

  public Duration warmup() {
    return warmup;
  }

  public Duration timeout() {
    return timeout;
  }

  public int threads() {
    return threads;
  }

  public int seriesPerRequest() {
    return seriesPerRequest;
  }

  public int tenants() {
    return tenants;
  }

  public int labels() {
    return labels;
  }

  public String tenantLabel() {
    return tenantLabel;
  }

  public Encoding encoding() {
    return encoding;
  }

  public int poolSize() {
    return poolSize;
  }

  public long seed() {
    return seed;
  }

  /** The running relay's write URL, or {@code null} when a relay is spawned. */
  public URI relayUrl() {
    return relayUrl;
  }

  /** The relay jar to spawn, or {@code null} with {@link #relayUrl()}. */
  public Path spawnRelay() {
    return spawnRelay;
  }

  public List<String> jvmArgs() {
    return jvmArgs;
  }

  /** Port of the sink on 127.0.0.1; 0 for any free port. */
  public int sinkPort() {
    return sinkPort;
  }

  public boolean waitForEnter() {
    return waitForEnter;
  }
}
