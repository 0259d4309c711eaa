package io.prwrelay.server.config;

import java.time.Duration;

/**
 * The logging settings ({@code relay.log.*}).
 *
 * @param failureInterval at most one log line per tenant and failure kind per this interval
 */
public record LogConfig(Duration failureInterval) {
  static LogConfig load(ConfigValues v) throws ConfigException {
    return new LogConfig(v.duration(ConfigKeys.LOG_FAILURE_INTERVAL));
  }
}
