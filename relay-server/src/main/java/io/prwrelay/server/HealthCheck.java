package io.prwrelay.server;

import io.prwrelay.server.config.ServerConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The {@code --healthcheck} mode of the jar: asks the relay configured like this process ({@code
 * relay.server.host}, {@code relay.server.port}) whether it is ready, for a container health check
 * that needs no tool beside the JVM. A wildcard listen address is asked on loopback.
 */
final class HealthCheck {
  /** How long the whole check may take: connect, request and answer. */
  static final Duration TIMEOUT = Duration.ofSeconds(3);

  private HealthCheck() {}

  /**
   * GETs {@code /-/ready}.
   *
   * @param err receives one line when the relay is not ready
   * @return 0 when the relay answers 200, 1 otherwise
   */
  static int run(ServerConfig server, PrintStream err) {
    URI uri = uri(server);
    HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    try {
      HttpResponse<String> r =
          client.send(
              HttpRequest.newBuilder(uri).timeout(TIMEOUT).GET().build(),
              HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() == 200) {
        return 0;
      }
      err.println(
          "prw-relay: not ready: " + uri + " answered " + r.statusCode() + " " + r.body().strip());
      return 1;
    } catch (IOException e) {
      err.println("prw-relay: not ready: " + uri + ": " + e);
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 1;
    }
  }

  /** The readiness URL of the relay listening at {@code server}'s address. */
  static URI uri(ServerConfig server) {
    String host = server.host();
    if (host.equals("0.0.0.0") || host.isEmpty()) {
      host = "127.0.0.1";
    } else if (host.equals("::") || host.equals("[::]")) {
      host = "[::1]";
    } else if (host.indexOf(':') >= 0 && !host.startsWith("[")) {
      host = "[" + host + "]";
    }
    return URI.create("http://" + host + ":" + server.port() + "/-/ready");
  }
}
