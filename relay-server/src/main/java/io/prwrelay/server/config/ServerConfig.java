package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import java.time.Duration;
import java.util.List;

/**
 * The ingress settings ({@code relay.server.*}): where to listen, how large and how slow a request
 * may be, how much request memory and how many connections are admitted at once, how long an idle
 * connection stays open, how many event loops run, and the inbound auth and TLS sections.
 *
 * <p>Declares the keys it reads; those of inbound auth and TLS are declared by {@link
 * InboundAuthConfig} and {@link IngressTlsConfig}, which read them.
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

  public static final ConfigKey HOST =
      key("relay.server.host", "0.0.0.0", "ingress listen address");

  public static final ConfigKey PORT =
      key("relay.server.port", "8080", "ingress listen port (0 = any free port)");

  public static final ConfigKey MAX_REQUEST_BYTES =
      key(
          "relay.server.max-request-bytes",
          "33554432",
          "largest compressed request body; larger bodies get 413");

  public static final ConfigKey MAX_DECOMPRESSED_BYTES =
      key(
          "relay.server.max-decompressed-bytes",
          "134217728",
          "largest decompressed request, and largest total of the requests the relay builds of"
              + " one PRW 2.0 request (converted to PRW 1.0, or one PRW 2.0 request per tenant with"
              + " its own symbols table); larger requests get 400");

  public static final ConfigKey MAX_DECOMPRESSION_RATIO =
      key(
          "relay.server.max-decompression-ratio",
          "256",
          "largest ratio of a request's decompressed size to its compressed body; a body that"
              + " decompresses to more gets 400 (real remote-write payloads compress 5 to 50"
              + " times; snappy cannot exceed about 21)");

  public static final ConfigKey READ_TIMEOUT =
      key(
          "relay.server.read-timeout",
          "30s",
          "time allowed to receive one whole request; slower senders get 408 and are disconnected");

  public static final ConfigKey BODY_STALL_TIMEOUT =
      key(
          "relay.server.body-stall-timeout",
          "10s",
          "a request body of which no byte arrives for this long gets 408 and is disconnected, its"
              + " memory returned (the whole body still has relay.server.read-timeout)");

  public static final ConfigKey IDLE_TIMEOUT =
      key(
          "relay.server.idle-timeout",
          "5m",
          "idle keep-alive connections are closed after this long without a request");

  public static final ConfigKey IO_THREADS =
      key(
          "relay.server.io-threads",
          "0",
          "event loop threads for ingress and egress (0 = number of CPUs)");

  public static final ConfigKey MAX_INFLIGHT_BYTES =
      key(
          "relay.server.max-inflight-bytes",
          "auto",
          "request memory admitted at once: each request's compressed body (as it arrives, from"
              + " a first buffer of 64 KiB; never its declared Content-Length), then what it"
              + " decompresses to, then the tenant requests built of it, held until the answer;"
              + " more gets 503. auto = the smaller of half the JVM's"
              + " max direct memory and a quarter of its max heap, at least max-request-bytes");

  public static final ConfigKey MAX_INFLIGHT_BYTES_PER_CLIENT =
      key(
          "relay.server.max-inflight-bytes-per-client",
          "auto",
          "share of max-inflight-bytes one sender (client IP address, and credential under"
              + " inbound auth) may hold; more gets 503. auto = half of max-inflight-bytes, at"
              + " least max-request-bytes");

  public static final ConfigKey MAX_CONNECTIONS =
      key(
          "relay.server.max-connections",
          "4096",
          "open ingress connections served; a connection beyond it gets 503 with Retry-After to"
              + " its first request, beyond twice it is closed at once");

  public static final ConfigKey RELOAD_INTERVAL =
      key(
          "relay.server.reload-interval",
          "10s",
          "how often the TLS certificate, key and CA files and the bearer token file are checked"
              + " for changes");

  /** The keys of this section, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS =
      List.of(
          HOST,
          PORT,
          MAX_REQUEST_BYTES,
          MAX_DECOMPRESSED_BYTES,
          MAX_DECOMPRESSION_RATIO,
          READ_TIMEOUT,
          BODY_STALL_TIMEOUT,
          IDLE_TIMEOUT,
          IO_THREADS,
          MAX_INFLIGHT_BYTES,
          MAX_INFLIGHT_BYTES_PER_CLIENT,
          MAX_CONNECTIONS,
          RELOAD_INTERVAL);

  /** A limit left to {@code auto}: sized from the JVM's max direct memory. */
  public static final long AUTO = -1;

  static ServerConfig load(ConfigValues v) throws ConfigException {
    String host = v.string(HOST);
    if (host.isEmpty()) {
      throw v.invalid(HOST, "must not be empty");
    }
    int maxRequestBytes = (int) v.bytes(MAX_REQUEST_BYTES, 1, Integer.MAX_VALUE - 8);
    return new ServerConfig(
        host,
        v.integer(PORT, 0, 65535),
        maxRequestBytes,
        (int) v.bytes(MAX_DECOMPRESSED_BYTES, 1, Integer.MAX_VALUE - 8),
        v.integer(MAX_DECOMPRESSION_RATIO, 1, 1_000_000),
        v.duration(READ_TIMEOUT),
        v.duration(BODY_STALL_TIMEOUT),
        v.duration(IDLE_TIMEOUT),
        v.integer(IO_THREADS, 0, 1024),
        bytesOrAuto(v, MAX_INFLIGHT_BYTES, maxRequestBytes),
        bytesOrAuto(v, MAX_INFLIGHT_BYTES_PER_CLIENT, maxRequestBytes),
        v.integer(MAX_CONNECTIONS, 1, 1_000_000),
        v.duration(RELOAD_INTERVAL),
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
              + MAX_REQUEST_BYTES.name()
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
