package io.prwrelay.server.testing;

import io.prwrelay.server.app.RelayServer;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.testkit.ScriptedDownstream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import org.xerial.snappy.Snappy;

/**
 * A relay on 127.0.0.1 in front of a {@link ScriptedDownstream}, with a sender-side HTTP client.
 */
public final class RelayFixture implements AutoCloseable {
  public final ScriptedDownstream downstream;
  public final RelayServer relay;
  private final HttpClient http = HttpClient.newHttpClient();

  /** Starts a relay with short test timeouts, overridden by {@code overrides} (config keys). */
  public RelayFixture(Map<String, String> overrides) throws Exception {
    this(overrides, d -> {});
  }

  /**
   * Starts a relay as {@link #RelayFixture(Map)} does, after {@code script} has set up the
   * downstream (for what the relay sends as soon as it starts, such as queued records).
   */
  public RelayFixture(Map<String, String> overrides, Consumer<ScriptedDownstream> script)
      throws Exception {
    downstream = new ScriptedDownstream();
    script.accept(downstream);
    Map<String, String> props = new HashMap<>();
    props.put("relay.server.host", "127.0.0.1");
    props.put("relay.server.port", "0");
    props.put("relay.server.io-threads", "2");
    props.put("relay.downstream.url", downstream.url());
    props.put("relay.downstream.timeout", "3s");
    props.put("relay.downstream.attempt-timeout", "1s");
    props.put("relay.downstream.retry.initial-backoff", "20ms");
    props.put("relay.downstream.retry.max-backoff", "100ms");
    props.putAll(overrides);
    if (overrides.containsKey("relay.downstream.url")) {
      props.put(
          "relay.downstream.url",
          overrides
              .get("relay.downstream.url")
              .replace("$DOWNSTREAM", "127.0.0.1:" + downstream.port()));
    }
    relay = new RelayServer(RelayConfig.load(null, props, Map.of()));
    relay.start();
  }

  public RelayFixture() throws Exception {
    this(Map.of());
  }

  public URI uri(String path) {
    return URI.create("http://127.0.0.1:" + relay.address().getPort() + path);
  }

  /** POSTs an uncompressed request, snappy-compressed, with the headers a PRW 1.0 sender sends. */
  public HttpResponse<String> write(byte[] request, String... extraHeaders) throws Exception {
    return write(http, uri("/api/v1/write"), request, extraHeaders);
  }

  /**
   * POSTs an uncompressed request, snappy-compressed, with the headers a PRW 1.0 sender sends, to
   * {@code uri}: for a relay that is not this fixture's (another process, other settings).
   *
   * @param extraHeaders name, value, name, value...
   */
  public static HttpResponse<String> write(
      HttpClient http, URI uri, byte[] request, String... extraHeaders) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/x-protobuf")
            .header("Content-Encoding", "snappy")
            .header("X-Prometheus-Remote-Write-Version", "0.1.0")
            .header("User-Agent", "test-sender");
    for (int i = 0; i < extraHeaders.length; i += 2) {
      b.header(extraHeaders[i], extraHeaders[i + 1]);
    }
    b.POST(HttpRequest.BodyPublishers.ofByteArray(Snappy.compress(request)));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /**
   * POSTs a body compressed by the caller ({@code contentEncoding}: {@code snappy} or {@code zstd})
   * with the headers a PRW 1.0 sender sends.
   *
   * @param extraHeaders name, value, name, value...
   */
  public HttpResponse<String> writeCompressed(
      byte[] compressed, String contentEncoding, String... extraHeaders) throws Exception {
    return post(compressed, "application/x-protobuf", contentEncoding, "0.1.0", extraHeaders);
  }

  /** POSTs {@code body} to {@code /api/v1/write} with a sender's headers. */
  private HttpResponse<String> post(
      byte[] body,
      String contentType,
      String contentEncoding,
      String remoteWriteVersion,
      String... extraHeaders)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri("/api/v1/write"))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", contentType)
            .header("Content-Encoding", contentEncoding)
            .header("X-Prometheus-Remote-Write-Version", remoteWriteVersion)
            .header("User-Agent", "test-sender");
    for (int i = 0; i < extraHeaders.length; i += 2) {
      b.header(extraHeaders[i], extraHeaders[i + 1]);
    }
    b.POST(HttpRequest.BodyPublishers.ofByteArray(body));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** {@link #write} on another thread; the future fails with what {@code write} threw. */
  public CompletableFuture<HttpResponse<String>> writeAsync(byte[] request) {
    return async(() -> write(request));
  }

  /** {@link #writeV2} on another thread; the future fails with what {@code writeV2} threw. */
  public CompletableFuture<HttpResponse<String>> writeV2Async(byte[] request) {
    return async(() -> writeV2(request));
  }

  private static CompletableFuture<HttpResponse<String>> async(
      Callable<HttpResponse<String>> send) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return send.call();
          } catch (Exception e) {
            throw new CompletionException(e);
          }
        });
  }

  /** The Content-Type of a PRW 2.0 request. */
  public static final String V2_CONTENT_TYPE =
      "application/x-protobuf;proto=io.prometheus.write.v2.Request";

  /**
   * POSTs an already compressed body with the headers a PRW 2.0 sender sends: {@code
   * contentEncoding} ({@code snappy} or {@code zstd}) and the PRW 2.0 Content-Type.
   */
  public HttpResponse<String> writeV2Compressed(
      byte[] compressed, String contentEncoding, String... extraHeaders) throws Exception {
    return post(compressed, V2_CONTENT_TYPE, contentEncoding, "2.0.0", extraHeaders);
  }

  /** POSTs an uncompressed PRW 2.0 request, snappy-compressed. */
  public HttpResponse<String> writeV2(byte[] request, String... extraHeaders) throws Exception {
    return writeV2Compressed(Snappy.compress(request), "snappy", extraHeaders);
  }

  public HttpResponse<String> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(uri(path)).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  @Override
  public void close() throws Exception {
    relay.shutdown(Duration.ofSeconds(5));
    downstream.close();
  }
}
