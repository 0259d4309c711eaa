package io.prwrelay.server.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.prwrelay.server.app.RelayServer;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testkit.ScriptedDownstream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An https downstream: verified against a configured CA file, refused when not trusted. */
class TlsDownstreamTest {
  @TempDir static Path dir;
  static Path keystore;
  static Path caPem;

  /** A self-signed certificate for 127.0.0.1, made with the JDK's keytool. */
  @BeforeAll
  static void certificate() throws Exception {
    keystore = dir.resolve("server.p12");
    caPem = dir.resolve("ca.pem");
    String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
    run(
        keytool,
        "-genkeypair",
        "-alias",
        "server",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=127.0.0.1",
        "-ext",
        "SAN=ip:127.0.0.1",
        "-validity",
        "2",
        "-keystore",
        keystore.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        "changeit");
    run(
        keytool,
        "-exportcert",
        "-rfc",
        "-alias",
        "server",
        "-keystore",
        keystore.toString(),
        "-storepass",
        "changeit",
        "-file",
        caPem.toString());
  }

  private static void run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), out);
  }

  private static SslContext serverContext() throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(keystore)) {
      ks.load(in, "changeit".toCharArray());
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, "changeit".toCharArray());
    return SslContextBuilder.forServer(kmf).build();
  }

  private static int send(ScriptedDownstream downstream, Map<String, String> tls) throws Exception {
    Map<String, String> props = new java.util.HashMap<>(tls);
    props.put("relay.server.host", "127.0.0.1");
    props.put("relay.server.port", "0");
    props.put("relay.downstream.url", downstream.url());
    props.put("relay.downstream.timeout", "1s");
    RelayServer relay = new RelayServer(RelayConfig.load(null, props, Map.of()));
    relay.start();
    try {
      return RelayFixture.write(
              HttpClient.newHttpClient(),
              URI.create("http://127.0.0.1:" + relay.address().getPort() + "/api/v1/write"),
              RawProto.series(RawProto.label("service_id", "t"), RawProto.sample(1, 1)))
          .statusCode();
    } finally {
      relay.shutdown(Duration.ofSeconds(2));
    }
  }

  @Test
  void deliversOverHttpsTrustingTheConfiguredCa() throws Exception {
    try (ScriptedDownstream downstream = new ScriptedDownstream(serverContext())) {
      assertTrue(downstream.url().startsWith("https://"));
      assertEquals(204, send(downstream, Map.of("relay.downstream.tls.ca-file", caPem.toString())));
      assertEquals(List.of("t"), List.copyOf(downstream.byTenant().keySet()));
    }
  }

  @Test
  void untrustedCertificateIsARetriableFailure() throws Exception {
    try (ScriptedDownstream downstream = new ScriptedDownstream(serverContext())) {
      assertEquals(503, send(downstream, Map.of()));
      assertTrue(downstream.received().isEmpty());
    }
  }
}
