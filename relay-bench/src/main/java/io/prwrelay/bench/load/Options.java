package io.prwrelay.bench.load;

import io.prwrelay.server.config.Durations;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;

/**
 * Command line options of the load generator, parsed with picocli and validated. Every option takes
 * the form {@code --name value} or {@code --name=value}; {@link #help()} lists them with their
 * defaults, from the descriptions in {@code LoadgenOptions.properties}.
 *
 * @param rate requests per second over all connections; 0 for max-rate mode
 * @param requests cap on measured requests; 0 for none
 * @param relayUrl the running relay's write URL, or {@code null} when a relay is spawned
 * @param spawnRelay the relay jar to spawn, or {@code null} with {@link #relayUrl()}
 * @param relayArgs {@code key=value} settings of a spawned relay, passed as {@code -Dkey=value}
 * @param shape which tenants each generated body carries
 * @param sinkPort port of the sink on 127.0.0.1; 0 for any free port
 * @param retries how often a body answered 429 or 5xx is sent again, at most
 * @param badTenant the misbehaving tenant, if any
 * @param explodingSeries series of {@value RequestPool#EXPLODING_TENANT} in every request, each
 *     with a label value never sent before (a cardinality explosion); 0 for none
 * @param codecFloor time spent measuring the {@link CodecFloor} before the run; zero for none
 * @param profiler async-profiler to run in the spawned relay over the measured window, if any
 * @param sweepTenants tenant counts of a sweep ({@link TenantSweep}), one run each; empty for one
 *     run
 * @param chart where a sweep writes its SVG chart, or {@code null}
 * @param helpRequested {@code --help} was given: print {@link #help()} and do nothing else
 */
public record Options(
    int connections,
    double rate,
    Duration duration,
    long requests,
    Duration warmup,
    Duration timeout,
    int threads,
    int seriesPerRequest,
    int tenants,
    Shape shape,
    int labels,
    String tenantLabel,
    Encoding encoding,
    int poolSize,
    long seed,
    URI relayUrl,
    Path spawnRelay,
    List<String> jvmArgs,
    List<String> relayArgs,
    int sinkPort,
    int retries,
    Optional<BadTenant> badTenant,
    int explodingSeries,
    Duration codecFloor,
    Optional<RelayProfiler> profiler,
    List<Integer> sweepTenants,
    Path chart,
    boolean waitForEnter,
    boolean helpRequested) {
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

  /** Which tenants the series of a generated body belong to. */
  public enum Shape {
    /** Every body: each series of a tenant chosen at random among {@code --tenants}. */
    INTERLEAVED,
    /**
     * Every body of one tenant, the bodies taking the tenants in turn: a sender whose targets all
     * carry one team's label.
     */
    SINGLE,
    /** Four bodies in five of one tenant ({@link #SINGLE}), the fifth {@link #INTERLEAVED}. */
    MIX;

    /** Whether body number {@code body} has its series' tenants chosen at random. */
    public boolean interleaves(int body) {
      return this == INTERLEAVED || (this == MIX && body % 5 == 4);
    }

    /** The option's value. */
    public String value() {
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

  /** The command line as picocli fills it in: option names, value labels and defaults. */
  @Command(
      name = "java -jar relay-bench/target/loadgen.jar",
      resourceBundle = "io.prwrelay.bench.load.LoadgenOptions",
      customSynopsis = "java -jar relay-bench/target/loadgen.jar [options]",
      sortOptions = false,
      usageHelpWidth = 100)
  private static final class Args {
    @ArgGroup(validate = false, headingKey = "heading.relay", order = 1)
    final Relay relay = new Relay();

    @ArgGroup(validate = false, headingKey = "heading.load", order = 2)
    final Load load = new Load();

    @ArgGroup(validate = false, headingKey = "heading.requests", order = 3)
    final Requests requests = new Requests();

    @ArgGroup(validate = false, headingKey = "heading.bad", order = 4)
    final Bad bad = new Bad();

    @ArgGroup(validate = false, headingKey = "heading.sweep", order = 5)
    final Sweep sweep = new Sweep();

    @Option(
        names = {"--help", "-h"},
        usageHelp = true)
    boolean help;
  }

  private static final class Relay {
    @Option(names = "--spawn-relay", paramLabel = "JAR", order = 1)
    Path spawnRelay;

    @Option(names = "--relay-url", paramLabel = "URL", converter = LoopbackUrl.class, order = 2)
    URI relayUrl;

    @Option(names = "--jvm-args", paramLabel = "\"ARGS\"", order = 3)
    String jvmArgs = "";

    @Option(names = "--relay-arg", paramLabel = "KEY=VALUE", order = 4)
    List<String> relayArgs = new ArrayList<>();

    @Option(names = "--sink-port", paramLabel = "PORT", order = 5)
    Integer sinkPort;

    @Option(names = "--wait", order = 6)
    boolean waitForEnter;

    @Option(names = "--profile-agent", paramLabel = "LIB", order = 7)
    Path profileAgent;

    @Option(names = "--profile", paramLabel = "OPTIONS", order = 8)
    String profile;
  }

  private static final class Load {
    @Option(names = "--connections", paramLabel = "N", order = 1)
    int connections = 4;

    @Option(names = "--rate", paramLabel = "R", order = 2)
    double rate = 0;

    @Option(names = "--duration", paramLabel = "D", order = 3)
    Duration duration = Duration.ofSeconds(20);

    @Option(names = "--requests", paramLabel = "N", order = 4)
    long requests = 0;

    @Option(names = "--warmup", paramLabel = "D", order = 5)
    Duration warmup = Duration.ofSeconds(5);

    @Option(names = "--timeout", paramLabel = "D", order = 6)
    Duration timeout = Duration.ofSeconds(30);

    @Option(names = "--threads", paramLabel = "N", order = 7)
    int threads = 1;

    @Option(names = "--retries", paramLabel = "N", order = 8)
    int retries = 5;

    @Option(names = "--codec-floor", paramLabel = "D", order = 9)
    Duration codecFloor = Duration.ofSeconds(2);
  }

  private static final class Requests {
    @Option(names = "--series-per-request", paramLabel = "N", order = 1)
    int seriesPerRequest = 2000;

    @Option(names = "--tenants", paramLabel = "N", order = 2)
    int tenants = 10;

    @Option(names = "--shape", paramLabel = "interleaved|single|mix", order = 3)
    Shape shape = Shape.INTERLEAVED;

    @Option(names = "--labels", paramLabel = "N", order = 4)
    int labels = 8;

    @Option(names = "--tenant-label", paramLabel = "NAME", order = 5)
    String tenantLabel = "service_id";

    @Option(names = "--encoding", paramLabel = "snappy|zstd", order = 6)
    Encoding encoding = Encoding.SNAPPY;

    @Option(names = "--protocol", paramLabel = "v1", order = 7)
    String protocol = "v1";

    @Option(names = "--pool", paramLabel = "N", order = 8)
    int poolSize = 64;

    @Option(names = "--seed", paramLabel = "N", order = 9)
    long seed = 42;

    @Option(names = "--exploding-tenant", paramLabel = "N", order = 10)
    int explodingSeries = 0;
  }

  private static final class Sweep {
    @Option(names = "--sweep-tenants", paramLabel = "N", split = ",", order = 1)
    List<Integer> tenants = new ArrayList<>();

    @Option(names = "--chart", paramLabel = "FILE", order = 2)
    Path chart;
  }

  private static final class Bad {
    @Option(names = "--bad-tenant", paramLabel = "429|slow|503", order = 1)
    String kind;

    @Option(names = "--bad-share", paramLabel = "F", order = 2)
    Double share;

    @Option(names = "--bad-delay", paramLabel = "D", order = 3)
    Duration delay;

    @Option(names = "--bad-retry-after", paramLabel = "D", order = 4)
    Duration retryAfter;
  }

  private static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new Args()).setUsageHelpLongOptionsMaxWidth(26);
    cl.registerConverter(Duration.class, Options::duration);
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    return cl;
  }

  /**
   * Parses a command line.
   *
   * @throws UsageException naming the offending option
   */
  public static Options parse(String... args) throws UsageException {
    CommandLine cl = commandLine();
    try {
      cl.parseArgs(args);
    } catch (ParameterException e) {
      throw new UsageException(e.getMessage());
    }
    Args a = cl.getCommand();
    Relay r = a.relay;
    Load l = a.load;
    Requests q = a.requests;
    range("--connections", l.connections, 1, 10_000);
    range("--requests", l.requests, 0, Long.MAX_VALUE);
    range("--threads", l.threads, 1, 256);
    range("--series-per-request", q.seriesPerRequest, 1, 1_000_000);
    range("--tenants", q.tenants, 1, 100_000);
    range("--labels", q.labels, 2, 100);
    range("--pool", q.poolSize, 1, 100_000);
    range("--sink-port", r.sinkPort == null ? 0 : r.sinkPort, 0, 65535);
    range("--retries", l.retries, 0, 1000);
    range("--exploding-tenant", q.explodingSeries, 0, 10_000);
    check(
        q.explodingSeries == 0 || q.encoding == Encoding.SNAPPY,
        "--exploding-tenant needs --encoding snappy: its label values are written into each"
            + " request's snappy body");
    check(l.rate >= 0 && !Double.isInfinite(l.rate), "--rate must be 0 (max rate) or a rate > 0");
    check(!l.duration.isZero(), "--duration must be more than 0");
    check(l.timeout.toMillis() >= 1, "--timeout must be at least 1ms");
    check(
        q.tenantLabel.matches("[a-zA-Z_][a-zA-Z0-9_]*"),
        "--tenant-label '" + q.tenantLabel + "' is not a Prometheus label name");
    check(!q.tenantLabel.equals("__name__"), "--tenant-label cannot be __name__");
    String protocol = q.protocol.toLowerCase(Locale.ROOT);
    check(
        !List.of("v2", "2", "2.0").contains(protocol),
        "--protocol v2 (PRW 2.0) is not supported: the relay and this generator speak PRW 1.0"
            + " only; use --protocol v1");
    check(List.of("v1", "1", "1.0").contains(protocol), "--protocol '" + protocol + "' must be v1");
    Optional<BadTenant> bad = badTenant(a.bad, q);
    for (int t : a.sweep.tenants) {
      range("--sweep-tenants", t, 1, 100_000);
    }
    check(a.sweep.chart == null || !a.sweep.tenants.isEmpty(), "--chart needs --sweep-tenants");
    for (String arg : r.relayArgs) {
      check(
          arg.matches("relay\\.[a-z0-9.-]+=.*"),
          "--relay-arg '"
              + arg
              + "' must be a relay key and its value, e.g. relay.delivery.mode=queue");
    }
    Path spawn = r.spawnRelay;
    if (!a.help) {
      check(
          r.relayUrl == null || spawn == null,
          "give either --relay-url or --spawn-relay, not both");
      if (r.relayUrl == null) {
        check(
            Files.isRegularFile(spawn == null ? DEFAULT_RELAY_JAR : spawn),
            (spawn != null ? "--spawn-relay " : "no --relay-url given and the default relay jar ")
                + (spawn == null ? DEFAULT_RELAY_JAR : spawn)
                + " does not exist (build it with 'mvn package -DskipTests', run from the"
                + " repository root, or give --relay-url of a running relay)");
        spawn = spawn == null ? DEFAULT_RELAY_JAR : spawn;
      }
      check(
          r.relayUrl != null || !r.waitForEnter,
          "--wait needs --relay-url (a spawned relay is configured for you)");
      check(
          r.relayUrl == null || r.jvmArgs.isBlank(),
          "--jvm-args applies only to a spawned relay, not with --relay-url");
      check(
          r.relayUrl == null || r.relayArgs.isEmpty(),
          "--relay-arg applies only to a spawned relay, not with --relay-url");
      check(
          (r.profileAgent == null) == (r.profile == null),
          "--profile-agent and --profile go together");
      check(
          r.relayUrl == null || r.profile == null,
          "--profile applies only to a spawned relay, not with --relay-url");
      check(
          r.profileAgent == null || Files.isRegularFile(r.profileAgent),
          "--profile-agent " + r.profileAgent + " does not exist");
    }
    return new Options(
        l.connections,
        l.rate,
        l.duration,
        l.requests,
        l.warmup,
        l.timeout,
        l.threads,
        q.seriesPerRequest,
        q.tenants,
        q.shape,
        q.labels,
        q.tenantLabel,
        q.encoding,
        q.poolSize,
        q.seed,
        r.relayUrl,
        spawn,
        r.jvmArgs.isBlank() ? List.of() : List.of(r.jvmArgs.trim().split("\\s+")),
        List.copyOf(r.relayArgs),
        r.sinkPort != null ? r.sinkPort : r.relayUrl == null ? 0 : EXTERNAL_SINK_PORT,
        l.retries,
        bad,
        q.explodingSeries,
        l.codecFloor,
        r.profile == null
            ? Optional.empty()
            : Optional.of(new RelayProfiler(r.profileAgent, r.profile)),
        List.copyOf(a.sweep.tenants),
        a.sweep.chart,
        r.waitForEnter,
        a.help);
  }

  private static Optional<BadTenant> badTenant(Bad b, Requests q) throws UsageException {
    if (b.kind == null) {
      check(
          b.share == null && b.delay == null && b.retryAfter == null,
          "--bad-share, --bad-delay and --bad-retry-after need --bad-tenant");
      return Optional.empty();
    }
    BadTenant.Kind kind;
    try {
      kind = BadTenant.Kind.of(b.kind);
    } catch (IllegalArgumentException e) {
      throw new UsageException("--bad-tenant " + e.getMessage());
    }
    double share = b.share == null ? 0.1 : b.share;
    check(share > 0 && share <= 1, "--bad-share must be more than 0 and at most 1");
    check(
        b.delay == null || kind == BadTenant.Kind.SLOW, "--bad-delay applies to --bad-tenant slow");
    check(
        b.retryAfter == null || kind != BadTenant.Kind.SLOW,
        "--bad-retry-after applies to --bad-tenant 429 or 503");
    Duration delay = b.delay == null ? Duration.ofSeconds(2) : b.delay;
    Duration retryAfter = b.retryAfter == null ? Duration.ofSeconds(1) : b.retryAfter;
    check(!delay.isZero(), "--bad-delay must be more than 0");
    check(
        retryAfter.isZero() || retryAfter.toMillis() % 1000 == 0,
        "--bad-retry-after must be whole seconds (Retry-After carries seconds) or 0s for none");
    check(
        q.encoding == Encoding.SNAPPY,
        "--bad-tenant needs --encoding snappy: only snappy bodies are made distinct per request");
    return Optional.of(new BadTenant(kind, share, delay, retryAfter));
  }

  private static void range(String name, long value, long min, long max) throws UsageException {
    check(
        value >= min && value <= max,
        name + " " + value + " is out of range " + min + ".." + (max == Long.MAX_VALUE ? "" : max));
  }

  private static void check(boolean ok, String problem) throws UsageException {
    if (!ok) {
      throw new UsageException(problem);
    }
  }

  private static Duration duration(String value) {
    try {
      return Durations.parse(value);
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException("'" + value + "' " + e.getMessage());
    }
  }

  /** These options with {@code tenants} tenants and no sweep: one run of a sweep. */
  public Options withTenants(int tenants) {
    return new Options(
        connections,
        rate,
        duration,
        requests,
        warmup,
        timeout,
        threads,
        seriesPerRequest,
        tenants,
        shape,
        labels,
        tenantLabel,
        encoding,
        poolSize,
        seed,
        relayUrl,
        spawnRelay,
        jvmArgs,
        relayArgs,
        sinkPort,
        retries,
        badTenant,
        explodingSeries,
        codecFloor,
        profiler,
        List.of(),
        null,
        waitForEnter,
        helpRequested);
  }

  /** The usage text: every option with its default. */
  public static String help() {
    return commandLine().getUsageMessage(CommandLine.Help.Ansi.OFF);
  }

  /** The options as they would be typed, for the report header. */
  public String describe() {
    return String.format(
        "%d connections, %s, %d series/request over %d tenants (%s, %s), %d labels/series, %s,"
            + " %d generated bodies%s%s%s",
        connections,
        rate == 0 ? "max rate" : "rate " + Summary.plain(rate) + "/s",
        seriesPerRequest,
        tenants,
        shape.value(),
        tenantLabel,
        labels,
        encoding.header(),
        poolSize,
        retries == 0 ? ", no retries" : ", up to " + retries + " retries on 429/5xx",
        badTenant.map(b -> "; bad tenant: " + b.describe()).orElse(""),
        explodingSeries == 0
            ? ""
            : "; "
                + RequestPool.EXPLODING_TENANT
                + ": "
                + explodingSeries
                + " new series in every request");
  }
}
