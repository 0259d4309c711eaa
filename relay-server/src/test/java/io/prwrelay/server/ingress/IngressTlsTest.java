package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.TestCertificates;
import io.prwrelay.testing.RawProto;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * TLS on the ingress, over real sockets, with certificates made by {@code openssl} for the test: a
 * write over https is routed; plain http to the TLS port gets a plain-text 400; a new certificate
 * written over the files is served to new connections without a restart (a bad pair is refused and
 * the old certificate kept); a required client certificate shuts out a client without one.
 */
@Timeout(120)
class IngressTlsTest {
  @TempDir static Path dir;
  static Path ca;

  /** A CA, two server certificates for 127.0.0.1 (CN relay-1, relay-2) and a client's. */
  @BeforeAll
  static void certificates() throws Exception {
    ca = dir.resolve("ca.pem");
    TestCertificates.selfSigned(dir.resolve("ca.key"), ca, "test-ca");
    Files.writeString(dir.resolve("san.ext"), "subjectAltName=IP:127.0.0.1\n");
    for (String name : List.of("relay-1", "relay-2", "sender")) {
      TestCertificates.signingRequest(dir.resolve(name + ".key"), dir.resolve(name + ".csr"), name);
      TestCertificates.openssl(
          "x509",
          "-req",
          "-in",
          dir.resolve(name + ".csr").toString(),
          "-CA",
          ca.toString(),
          "-CAkey",
          dir.resolve("ca.key").toString(),
          "-CAcreateserial",
          "-days",
          "2",
          "-out",
          dir.resolve(name + ".pem").toString(),
          "-extfile",
          dir.resolve("san.ext").toString());
    }
  }

  /** The serving files of one relay, starting with relay-1's pair. */
  private static Path[] servingFiles(String sub) throws Exception {
    Path d = Files.createDirectories(dir.resolve(sub));
    Path cert = d.resolve("tls.crt");
    Path key = d.resolve("tls.key");
    Files.copy(dir.resolve("relay-1.pem"), cert, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(dir.resolve("relay-1.key"), key, StandardCopyOption.REPLACE_EXISTING);
    return new Path[] {cert, key};
  }

  private static Map<String, String> tls(Path[] files, String... more) {
    Map<String, String> props = new HashMap<>();
    props.put("relay.server.tls.cert-file", files[0].toString());
    props.put("relay.server.tls.key-file", files[1].toString());
    for (int i = 0; i < more.length; i += 2) {
      props.put(more[i], more[i + 1]);
    }
    return props;
  }

  /** A client that trusts the test CA and presents {@code clientName}'s certificate, if any. */
  private static HttpClient client(String clientName) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", certificate(ca));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (clientName != null) {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      keys.setKeyEntry(
          "client",
          privateKey(dir.resolve(clientName + ".key")),
          new char[0],
          new Certificate[] {certificate(dir.resolve(clientName + ".pem"))});
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, new char[0]);
    }
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(5)).build();
  }

  private static X509Certificate certificate(Path pem) throws Exception {
    try (InputStream in = Files.newInputStream(pem)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  private static PrivateKey privateKey(Path pem) throws Exception {
    String text = Files.readString(pem);
    String body =
        text.substring(
            text.indexOf("-----BEGIN PRIVATE KEY-----") + 27,
            text.indexOf("-----END PRIVATE KEY-----"));
    return KeyFactory.getInstance("EC")
        .generatePrivate(new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(body)));
  }

  private static HttpResponse<String> write(HttpClient client, RelayFixture f, String tenant)
      throws Exception {
    byte[] body =
        Snappy.compress(
            RawProto.series(RawProto.label("service_id", tenant), RawProto.sample(1, 1)));
    return client.send(
        HttpRequest.newBuilder(
                URI.create("https://127.0.0.1:" + f.relay.address().getPort() + "/api/v1/write"))
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/x-protobuf")
            .header("Content-Encoding", "snappy")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The CN of the certificate the relay presents to a new connection. */
  private static String servedName(RelayFixture f) throws Exception {
    HttpResponse<String> r = write(client(null), f, "probe");
    assertEquals(204, r.statusCode());
    X509Certificate served =
        (X509Certificate) r.sslSession().orElseThrow().getPeerCertificates()[0];
    return served.getSubjectX500Principal().getName();
  }

  private static boolean scrapeContains(RelayFixture f, String text) {
    return f.relay.metrics().scrape().contains(text);
  }

  @Test
  void aWriteOverHttpsIsRouted() throws Exception {
    try (RelayFixture f = new RelayFixture(tls(servingFiles("routed")))) {
      HttpResponse<String> r = write(client(null), f, "team-a");
      assertEquals(204, r.statusCode(), r.body());
      assertEquals("TLSv1.3", r.sslSession().orElseThrow().getProtocol());
      assertEquals("team-a", f.downstream.received().get(0).tenant());
    }
  }

  @Test
  void anAnswerGivenBeforeTheBodyReachesATlsSender() throws Exception {
    Map<String, String> props =
        tls(
            servingFiles("early"),
            "relay.server.bearer-token",
            "tok",
            "relay.server.max-request-bytes",
            "65536");
    try (RelayFixture f = new RelayFixture(props)) {
      HttpClient client = client(null);
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> r =
            client.send(
                HttpRequest.newBuilder(
                        URI.create(
                            "https://127.0.0.1:" + f.relay.address().getPort() + "/api/v1/write"))
                    .timeout(Duration.ofSeconds(10))
                    .header("Content-Type", "application/x-protobuf")
                    .header("Content-Encoding", "snappy")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[1 << 20]))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(401, r.statusCode(), "try " + i);
        assertEquals(
            "Bearer realm=\"prw-relay\"", r.headers().firstValue("WWW-Authenticate").get());
      }
      assertTrue(f.downstream.received().isEmpty());
    }
  }

  @Test
  void plainHttpToTheTlsPortGetsAPlainTextAnswerAndIsClosed() throws Exception {
    try (RelayFixture f = new RelayFixture(tls(servingFiles("plain")))) {
      try (Socket s = new Socket("127.0.0.1", f.relay.address().getPort())) {
        s.setSoTimeout(10_000);
        s.getOutputStream()
            .write(
                "GET /-/healthy HTTP/1.1\r\nHost: r\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        s.getInputStream().transferTo(all);
        String answer = all.toString(StandardCharsets.US_ASCII);
        assertTrue(answer.startsWith("HTTP/1.1 400 Bad Request\r\n"), answer);
        assertTrue(answer.endsWith("this port speaks TLS only: send with https://\n"), answer);
      }
      assertTrue(scrapeContains(f, "relay_tls_handshake_failures_total{reason=\"plaintext\"} 1.0"));
      assertEquals(204, write(client(null), f, "t").statusCode(), "TLS clients still served");
    }
  }

  @Test
  void aNewCertificateIsServedWithoutARestartAndABadPairIsRefused() throws Exception {
    Path[] files = servingFiles("reload");
    try (RelayFixture f = new RelayFixture(tls(files, "relay.server.reload-interval", "100ms"))) {
      assertEquals("CN=relay-1", servedName(f));
      // The certificate changes before its key: that pair does not match and is refused.
      replace(dir.resolve("relay-2.pem"), files[0]);
      awaitScrape(f, "relay_reloads_total{file=\"tls\",result=\"failure\"}");
      assertEquals("CN=relay-1", servedName(f), "the previous certificate is kept");
      replace(dir.resolve("relay-2.key"), files[1]);
      awaitScrape(f, "relay_reloads_total{file=\"tls\",result=\"success\"}");
      assertEquals("CN=relay-2", servedName(f));
    }
  }

  /** Overwrites {@code target}, with a modification time that cannot equal the previous one. */
  private static void replace(Path source, Path target) throws IOException {
    FileTime before = Files.getLastModifiedTime(target);
    Files.copy(source, target, StandardCopyOption.REPLACE_EXISTING);
    Files.setLastModifiedTime(
        target, FileTime.from(before.toInstant().plusSeconds(1).plus(Duration.ofMillis(1))));
    assertTrue(Files.getLastModifiedTime(target).toInstant().isAfter(Instant.EPOCH));
  }

  private static void awaitScrape(RelayFixture f, String text) throws Exception {
    Await.until(text + " in the scrape", Duration.ofSeconds(10), () -> scrapeContains(f, text));
  }

  @Test
  void aRequiredClientCertificateShutsOutAClientWithoutOne() throws Exception {
    Map<String, String> props =
        tls(
            servingFiles("mutual"),
            "relay.server.tls.client-ca-file",
            ca.toString(),
            "relay.server.tls.client-auth",
            "require");
    try (RelayFixture f = new RelayFixture(props)) {
      assertEquals(204, write(client("sender"), f, "t").statusCode());
      assertThrows(IOException.class, () -> write(client(null), f, "t"));
      assertEquals(1, f.downstream.received().size());
      awaitScrape(f, "relay_tls_handshake_failures_total{reason=\"handshake\"}");
    }
  }
}
