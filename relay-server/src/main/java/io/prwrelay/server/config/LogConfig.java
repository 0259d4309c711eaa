package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The logging settings ({@code relay.log.*}).
 *
 * <p>Declares the keys it reads.
 *
 * @param failureInterval at most one log line per tenant and failure kind per this interval, and
 *     one aggregate line per reason while many tenants fail alike
 * @param level the least severe level logged
 */
public record LogConfig(Duration failureInterval, Level level) {

  public static final ConfigKey FAILURE_INTERVAL =
      key(
          "relay.log.failure-interval",
          "10s",
          "at most one log line per tenant and failure kind per interval; while more than 5"
              + " tenants fail for the same reason, one line per reason and interval instead");

  public static final ConfigKey LEVEL =
      key(
          "relay.log.level",
          "info",
          "least severe level logged: error, warn, info or debug (ignored when"
              + " java.util.logging.config.file is set)");

  /** The keys of this section, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS = List.of(FAILURE_INTERVAL, LEVEL);

  /** The levels of {@code relay.log.level}, from the fewest lines to the most. */
  public enum Level {
    /** Only errors: the relay cannot do its work (a bug, an unusable disk). */
    ERROR(java.util.logging.Level.SEVERE),
    /** Also warnings: failures of tenants, downstreams, files and settings. */
    WARN(java.util.logging.Level.WARNING),
    /** Also startup, shutdown, recoveries and switches (the default). */
    INFO(java.util.logging.Level.INFO),
    /** Also detail for debugging. */
    DEBUG(java.util.logging.Level.FINE);

    private final java.util.logging.Level jul;

    Level(java.util.logging.Level jul) {
      this.jul = jul;
    }

    /** The java.util.logging level it stands for. */
    public java.util.logging.Level julLevel() {
      return jul;
    }

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  static LogConfig load(ConfigValues v) throws ConfigException {
    return new LogConfig(v.duration(FAILURE_INTERVAL), v.choice(LEVEL, Level.class));
  }
}
