package io.prwrelay.server;

import io.netty.util.ResourceLeakDetector;
import io.prwrelay.server.app.RelayServer;
import io.prwrelay.server.config.ConfigException;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.config.RelayVersion;
import io.prwrelay.server.demo.Demo;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Logger;

/**
 * Command line entry point: {@code java -jar prw-relay.jar [--config file] [--healthcheck] [--demo]
 * [--help] [--version]}. Exits 0 after a graceful shutdown (SIGTERM or SIGINT), 2 on a usage or
 * configuration error, 1 when the relay cannot start (for example an unusable queue directory).
 * With {@code --healthcheck} it starts nothing: it asks the relay configured the same way whether
 * it is ready ({@link HealthCheck}) and exits 0 or 1.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) throws Exception {
    ResourceLeakDetector.Level leaks = leakDetection(System.getProperties());
    if (leaks != null) {
      ResourceLeakDetector.setLevel(leaks);
    }
    Logging.configure();
    Path config = null;
    boolean demo = false;
    boolean healthcheck = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--help":
        case "-h":
          System.out.print(RelayConfig.help());
          return;
        case "--version":
          System.out.println("prw-relay " + RelayVersion.VERSION);
          return;
        case "--demo":
          demo = true;
          break;
        case "--healthcheck":
          healthcheck = true;
          break;
        case "--config":
          if (i + 1 == args.length) {
            usage("--config needs a file name");
          }
          config = Path.of(args[++i]);
          break;
        default:
          if (args[i].startsWith("--config=")) {
            config = Path.of(args[i].substring("--config=".length()));
          } else {
            usage("unknown argument " + args[i]);
          }
      }
    }
    if (demo) {
      System.exit(Demo.run(System.out));
      return;
    }
    RelayConfig cfg;
    try {
      cfg = RelayConfig.load(config, systemProperties(), System.getenv());
    } catch (ConfigException e) {
      System.err.println("prw-relay: configuration error: " + e.getMessage());
      // A health check may exit only 0 or 1 (Docker reserves 2).
      System.exit(healthcheck ? 1 : 2);
      return;
    }
    if (healthcheck) {
      System.exit(HealthCheck.run(cfg.server(), System.err));
      return;
    }
    Logging.level(cfg.log().level().julLevel());
    Logger log = Logger.getLogger("io.prwrelay");
    for (String warning : cfg.warnings()) {
      log.warning(warning);
    }
    for (String unknown : RelayConfig.unknownEnvironmentVariables(System.getenv())) {
      log.warning("ignoring environment variable " + unknown + ": no such relay key");
    }
    RelayServer server;
    try {
      server = new RelayServer(cfg);
      server.start();
    } catch (IOException | RuntimeException e) {
      // One line naming the cause, and a non-zero exit, so that a supervisor restarts or reports.
      System.err.println("prw-relay: cannot start: " + e.getMessage());
      System.exit(1);
      return;
    }
    log.info(
        "prw-relay "
            + RelayVersion.VERSION
            + " listening on "
            + server.address()
            + " ("
            + server.transport()
            + "); "
            + cfg.describe());
    server.checkDownstream();
    CountDownLatch stop = new CountDownLatch(1);
    // Handling TERM and INT ourselves (instead of a shutdown hook) lets a graceful stop exit with
    // 0.
    for (String signal : new String[] {"TERM", "INT"}) {
      sun.misc.Signal.handle(new sun.misc.Signal(signal), s -> stop.countDown());
    }
    stop.await();
    log.info("shutting down: no new connections, finishing in-flight requests");
    server.shutdown(cfg.downstream().timeout().plusSeconds(1));
    log.info("stopped");
    System.exit(0);
  }

  /**
   * Netty's buffer leak detection for the relay: off, unless the user chose a level with {@code
   * io.netty.leakDetection.level} (or one of Netty's older properties, {@code
   * io.netty.leakDetectionLevel} and {@code io.netty.noResourceLeakDetection}), which Netty then
   * applies itself. Its default level tracks one buffer in 128 with a stack trace, nearly a tenth
   * of the relay's allocation under load; the tests run it at {@code paranoid}.
   *
   * @return the level to set, or {@code null} to leave Netty's
   */
  static ResourceLeakDetector.Level leakDetection(Properties properties) {
    for (String name : LEAK_DETECTION_PROPERTIES) {
      if (properties.getProperty(name) != null) {
        return null;
      }
    }
    return ResourceLeakDetector.Level.DISABLED;
  }

  /** The system properties by which Netty reads a leak detection level. */
  static final List<String> LEAK_DETECTION_PROPERTIES =
      List.of(
          "io.netty.leakDetection.level",
          "io.netty.leakDetectionLevel",
          "io.netty.noResourceLeakDetection");

  private static Map<String, String> systemProperties() {
    Map<String, String> m = new HashMap<>();
    for (String name : System.getProperties().stringPropertyNames()) {
      m.put(name, System.getProperty(name));
    }
    return m;
  }

  private static void usage(String problem) {
    System.err.println("prw-relay: " + problem);
    System.err.println(
        "usage: java -jar prw-relay.jar [--config relay.properties] [--healthcheck] [--demo] [--help]"
            + " [--version]");
    System.exit(2);
  }
}
