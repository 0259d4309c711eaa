package io.prwrelay.server;

import io.prwrelay.server.config.ServerConfig;
import java.io.IOException;
import java.io.PrintStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The {@code --healthcheck} mode of the jar: asks the relay configured like this process ({@code
 * relay.server.host}, {@code relay.server.port}) whether it is ready, for a container health check
 * that needs no tool beside the JVM. A wildcard listen address is asked on loopback.
 *
 * <p>With TLS on the ingress ({@code relay.server.tls.cert-file}) the check speaks https and
 * accepts whatever certificate the port presents: it asks its own relay one question and sends
 * nothing secret, and a certificate being rotated must not make the relay look unhealthy. A relay
 * that requires client certificates cannot be asked this way (use a TCP check).
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
    HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(TIMEOUT);
    if (server.tls().enabled()) {
      builder.sslContext(acceptingAnyCertificate());
    }
    HttpClient client = builder.build();
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
    String scheme = server.tls().enabled() ? "https" : "http";
    return URI.create(scheme + "://" + host + ":" + server.port() + "/-/ready");
  }

  private static SSLContext acceptingAnyCertificate() {
    // An extended trust manager does its own endpoint check (here: none), so the JDK adds no
    // hostname verification on top: the certificate's names need not include the loopback address.
    X509ExtendedTrustManager any =
        new X509ExtendedTrustManager() {
          @Override
          public void checkClientTrusted(X509Certificate[] chain, String authType) {}

          @Override
          public void checkServerTrusted(X509Certificate[] chain, String authType) {}

          @Override
          public void checkClientTrusted(X509Certificate[] chain, String authType, Socket s) {}

          @Override
          public void checkServerTrusted(X509Certificate[] chain, String authType, Socket s) {}

          @Override
          public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine e) {}

          @Override
          public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine e) {}

          @Override
          public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
          }
        };
    try {
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, new TrustManager[] {any}, null);
      return ctx;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("no TLS in this JVM", e);
    }
  }
}
