package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKeys.SERVER_HOST;
import static io.prwrelay.server.config.ConfigKeys.SERVER_IDLE_TIMEOUT;
import static io.prwrelay.server.config.ConfigKeys.SERVER_IO_THREADS;
import static io.prwrelay.server.config.ConfigKeys.SERVER_MAX_DECOMPRESSED_BYTES;
import static io.prwrelay.server.config.ConfigKeys.SERVER_MAX_REQUEST_BYTES;
import static io.prwrelay.server.config.ConfigKeys.SERVER_PORT;
import static io.prwrelay.server.config.ConfigKeys.SERVER_READ_TIMEOUT;

import java.time.Duration;

/**
 * The ingress settings ({@code relay.server.*}): where to listen, how large and how slow a request
 * may be, how long an idle connection stays open, and how many event loops run.
 *
 * @param maxRequestBytes largest compressed body; larger gets 413
 * @param maxDecompressedBytes largest decompressed request; larger gets 400
 * @param readTimeout time to receive one whole request; slower gets 408
 * @param idleTimeout idle keep-alive connections are closed after this long
 * @param ioThreads event loops; 0 means one per CPU (see {@link #eventLoops()})
 */
public record ServerConfig(
    String host,
    int port,
    int maxRequestBytes,
    int maxDecompressedBytes,
    Duration readTimeout,
    Duration idleTimeout,
    int ioThreads) {

  static ServerConfig load(ConfigValues v) throws ConfigException {
    String host = v.string(SERVER_HOST);
    if (host.isEmpty()) {
      throw v.invalid(SERVER_HOST, "must not be empty");
    }
    return new ServerConfig(
        host,
        v.integer(SERVER_PORT, 0, 65535),
        v.integer(SERVER_MAX_REQUEST_BYTES, 1, Integer.MAX_VALUE - 8),
        v.integer(SERVER_MAX_DECOMPRESSED_BYTES, 1, Integer.MAX_VALUE - 8),
        v.duration(SERVER_READ_TIMEOUT),
        v.duration(SERVER_IDLE_TIMEOUT),
        v.integer(SERVER_IO_THREADS, 0, 1024));
  }

  /** Number of event loops to run: {@link #ioThreads()}, or one per CPU when that is 0. */
  public int eventLoops() {
    return ioThreads > 0 ? ioThreads : Runtime.getRuntime().availableProcessors();
  }
}
