package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKeys.SERVER_BODY_STALL_TIMEOUT;
import static io.prwrelay.server.config.ConfigKeys.SERVER_HOST;
import static io.prwrelay.server.config.ConfigKeys.SERVER_IDLE_TIMEOUT;
import static io.prwrelay.server.config.ConfigKeys.SERVER_IO_THREADS;
import static io.prwrelay.server.config.ConfigKeys.SERVER_MAX_CONNECTIONS;
import static io.prwrelay.server.config.ConfigKeys.SERVER_MAX_DECOMPRESSED_BYTES;
import static io.prwrelay.server.config.ConfigKeys.SERVER_MAX_DECOMPRESSION_RATIO;
import static io.prwrelay.server.config.ConfigKeys.SERVER_MAX_INFLIGHT_BYTES;
import static io.prwrelay.server.config.ConfigKeys.SERVER_MAX_INFLIGHT_BYTES_PER_CLIENT;
import static io.prwrelay.server.config.ConfigKeys.SERVER_MAX_REQUEST_BYTES;
import static io.prwrelay.server.config.ConfigKeys.SERVER_PORT;
import static io.prwrelay.server.config.ConfigKeys.SERVER_READ_TIMEOUT;
import static io.prwrelay.server.config.ConfigKeys.SERVER_RELOAD_INTERVAL;

import java.time.Duration;

/**
 * The ingress settings ({@code relay.server.*}): where to listen, how large and how slow a request
 * may be, how much request memory and how many connections are admitted at once, how long an idle
 * connection stays open, how many event loops run, and the inbound auth and TLS sections.
 *
 * @param maxRequestBytes largest compressed body; larger gets 413
 * @param maxDecompressedBytes largest decompressed request, and largest request built from one;
 *     larger gets 400
 * @param maxDecompressionRatio largest decompressed size per compressed byte; more gets 400
 * @param readTimeout time to receive one whole request; slower gets 408
 * @param bodyStallTimeout longest pause in a request body; longer gets 408
 * @param idleTimeout idle keep-alive connections are closed after this long
 * @param ioThreads event loops; 0 means one per CPU (see {@link #eventLoops()})
 * @param maxInflightBytes body bytes admitted at once, or {@link #AUTO} (see {@link
 *     #inflightLimit(long, long)})
 * @param maxInflightBytesPerClient body bytes one client address may hold, or {@link #AUTO}
 * @param maxConnections connections served at once
 * @param reloadInterval how often certificate, key and token files are checked for changes
 */
public record ServerConfig(
    String host,
    int port,
    int maxRequestBytes,
    int maxDecompressedBytes,
    int maxDecompressionRatio,
    Duration readTimeout,
    Duration bodyStallTimeout,
    Duration idleTimeout,
    int ioThreads,
    long maxInflightBytes,
    long maxInflightBytesPerClient,
    int maxConnections,
    Duration reloadInterval,
    InboundAuthConfig auth,
    IngressTlsConfig tls) {

  /** A limit left to {@code auto}: sized from the JVM's max direct memory. */
  public static final long AUTO = -1;

  static ServerConfig load(ConfigValues v) throws ConfigException {
    String host = v.string(SERVER_HOST);
    if (host.isEmpty()) {
      throw v.invalid(SERVER_HOST, "must not be empty");
    }
    int maxRequestBytes = (int) v.bytes(SERVER_MAX_REQUEST_BYTES, 1, Integer.MAX_VALUE - 8);
    return new ServerConfig(
        host,
        v.integer(SERVER_PORT, 0, 65535),
        maxRequestBytes,
        (int) v.bytes(SERVER_MAX_DECOMPRESSED_BYTES, 1, Integer.MAX_VALUE - 8),
        v.integer(SERVER_MAX_DECOMPRESSION_RATIO, 1, 1_000_000),
        v.duration(SERVER_READ_TIMEOUT),
        v.duration(SERVER_BODY_STALL_TIMEOUT),
        v.duration(SERVER_IDLE_TIMEOUT),
        v.integer(SERVER_IO_THREADS, 0, 1024),
        bytesOrAuto(v, SERVER_MAX_INFLIGHT_BYTES, maxRequestBytes),
        bytesOrAuto(v, SERVER_MAX_INFLIGHT_BYTES_PER_CLIENT, maxRequestBytes),
        v.integer(SERVER_MAX_CONNECTIONS, 1, 1_000_000),
        v.duration(SERVER_RELOAD_INTERVAL),
        InboundAuthConfig.load(v),
        IngressTlsConfig.load(v));
  }

  /** {@code auto}, or a byte count that fits at least one largest request. */
  private static long bytesOrAuto(ConfigValues v, ConfigKey key, int maxRequestBytes)
      throws ConfigException {
    if (v.peek(key).equalsIgnoreCase("auto")) {
      v.string(key);
      return AUTO;
    }
    long bytes = v.bytes(key, 1, Long.MAX_VALUE / 2);
    if (bytes < maxRequestBytes) {
      throw v.invalid(
          key,
          "must be at least "
              + SERVER_MAX_REQUEST_BYTES.name()
              + " ("
              + maxRequestBytes
              + "), or one largest request could never be admitted");
    }
    return bytes;
  }

  /** Number of event loops to run: {@link #ioThreads()}, or one per CPU when that is 0. */
  public int eventLoops() {
    return ioThreads > 0 ? ioThreads : Runtime.getRuntime().availableProcessors();
  }

  /**
   * Request bytes (compressed bodies and what they decompress to) admitted at once: {@link
   * #maxInflightBytes()}, or under {@code auto} the smaller of half of {@code maxDirectMemory}
   * (compressed bodies and tenant batches live there; the other half stays for pool chunks,
   * compressed tenant batches and connection buffers) and a quarter of {@code maxHeap}
   * (decompressed requests live there, beside everything else the relay keeps), and at least {@link
   * #maxRequestBytes()}.
   */
  public long inflightLimit(long maxDirectMemory, long maxHeap) {
    return maxInflightBytes != AUTO
        ? maxInflightBytes
        : Math.max(maxRequestBytes, Math.min(maxDirectMemory / 2, maxHeap / 4));
  }

  /**
   * Body bytes one client address may hold: {@link #maxInflightBytesPerClient()} (at most the whole
   * limit), or under {@code auto} half of {@link #inflightLimit}, and at least {@link
   * #maxRequestBytes()}.
   */
  public long inflightLimitPerClient(long maxDirectMemory, long maxHeap) {
    long total = inflightLimit(maxDirectMemory, maxHeap);
    return maxInflightBytesPerClient != AUTO
        ? Math.min(total, maxInflightBytesPerClient)
        : Math.max(maxRequestBytes, total / 2);
  }
}
