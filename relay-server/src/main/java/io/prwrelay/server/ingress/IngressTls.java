package io.prwrelay.server.ingress;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.prwrelay.server.config.FileStamp;
import io.prwrelay.server.config.IngressTlsConfig;
import io.prwrelay.server.metrics.RelayMetrics;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.logging.Logger;

/**
 * The TLS side of the ingress: the server {@link SslContext} built from the configured PEM files
 * (certificate chain, PKCS#8 private key, optional client CA), TLSv1.3 and TLSv1.2 only, with
 * Netty's OpenSSL provider (BoringSSL, shipped for linux x86_64 and aarch64) when it loads and the
 * JDK's otherwise.
 *
 * <p>{@link #reloadIfChanged()} rebuilds the context when any of the files changed (modification
 * time or size); new connections use the new one, open connections keep theirs. A new set of files
 * that does not make a valid context (unreadable, malformed, a key that does not belong to the
 * certificate) is logged and counted, and the previous context stays in use.
 */
final class IngressTls {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.server");

  private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

  private final IngressTlsConfig config;
  private final RelayMetrics metrics;
  private final SslProvider provider;
  private volatile SslContext context;
  private FileStamp stamp;

  /**
   * @throws IOException naming the file that cannot be read or used
   */
  IngressTls(IngressTlsConfig config, RelayMetrics metrics) throws IOException {
    this.config = config;
    this.metrics = metrics;
    this.provider = OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
    this.stamp = FileStamp.of(files());
    this.context = build();
  }

  /** {@code openssl} or {@code jdk}: the provider in use, for the startup log. */
  String provider() {
    return provider == SslProvider.OPENSSL ? "openssl" : "jdk";
  }

  /** A handler for a new connection, from the current context. */
  SslHandler newHandler(ByteBufAllocator alloc) {
    return context.newHandler(alloc);
  }

  /** Rebuilds the context when a file changed; keeps the old one when the new files are bad. */
  void reloadIfChanged() {
    FileStamp now = FileStamp.of(files());
    if (now.equals(stamp)) {
      return;
    }
    stamp = now;
    try {
      context = build();
      metrics.reloaded("tls", true);
      LOG.info("ingress TLS certificate re-read from " + config.certFile());
    } catch (IOException e) {
      metrics.reloaded("tls", false);
      LOG.warning(
          "ingress TLS files changed but cannot be used, keeping the previous certificate: "
              + e.getMessage());
    }
  }

  private List<Path> files() {
    List<Path> files = new ArrayList<>(List.of(config.certFile(), config.keyFile()));
    if (config.clientCaFile() != null) {
      files.add(config.clientCaFile());
    }
    return files;
  }

  private SslContext build() throws IOException {
    List<X509Certificate> chain =
        certificates(config.certFile(), IngressTlsConfig.CERT_FILE.name());
    PrivateKey key = privateKey(config.keyFile());
    requireMatch(key, chain.get(0));
    SslContextBuilder b =
        SslContextBuilder.forServer(key, chain).sslProvider(provider).protocols(PROTOCOLS);
    if (config.clientAuth() != IngressTlsConfig.ClientAuth.NONE) {
      b.trustManager(certificates(config.clientCaFile(), IngressTlsConfig.CLIENT_CA_FILE.name()))
          .clientAuth(
              config.clientAuth() == IngressTlsConfig.ClientAuth.REQUIRE
                  ? ClientAuth.REQUIRE
                  : ClientAuth.OPTIONAL);
    }
    try {
      return b.build();
    } catch (IOException | RuntimeException e) {
      throw new IOException("cannot build the ingress TLS context: " + e.getMessage(), e);
    }
  }

  private static List<X509Certificate> certificates(Path file, String key) throws IOException {
    List<X509Certificate> certs = new ArrayList<>();
    try (InputStream in = Files.newInputStream(file)) {
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        certs.add((X509Certificate) c);
      }
    } catch (IOException | GeneralSecurityException | RuntimeException e) {
      throw new IOException(
          key + " " + file + ": not PEM certificates (" + e.getMessage() + ")", e);
    }
    if (certs.isEmpty()) {
      throw new IOException(key + " " + file + ": no certificate in it");
    }
    return certs;
  }

  /** An unencrypted PKCS#8 PEM key ({@code BEGIN PRIVATE KEY}): RSA, EC, Ed25519 or Ed448. */
  private static PrivateKey privateKey(Path file) throws IOException {
    String where = IngressTlsConfig.KEY_FILE.name() + " " + file;
    String pem = Files.readString(file, StandardCharsets.US_ASCII);
    int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
    int end = pem.indexOf("-----END PRIVATE KEY-----");
    if (begin < 0 || end < begin) {
      throw new IOException(
          where + ": expected an unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----)");
    }
    byte[] der;
    try {
      der =
          Base64.getMimeDecoder()
              .decode(pem.substring(begin + "-----BEGIN PRIVATE KEY-----".length(), end));
    } catch (IllegalArgumentException e) {
      throw new IOException(where + ": the key is not valid base64", e);
    }
    for (String algorithm : new String[] {"RSA", "EC", "Ed25519", "Ed448"}) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // not this algorithm
      }
    }
    throw new IOException(where + ": not an RSA, EC, Ed25519 or Ed448 PKCS#8 key");
  }

  /** Signs with the key and verifies with the certificate: they must be one pair. */
  private static void requireMatch(PrivateKey key, X509Certificate cert) throws IOException {
    String algorithm =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          default -> key.getAlgorithm();
        };
    try {
      byte[] data = "prw-relay".getBytes(StandardCharsets.US_ASCII);
      Signature s = Signature.getInstance(algorithm);
      s.initSign(key);
      s.update(data);
      byte[] signature = s.sign();
      Signature v = Signature.getInstance(algorithm);
      v.initVerify(cert.getPublicKey());
      v.update(data);
      if (!v.verify(signature)) {
        throw new IOException(
            IngressTlsConfig.KEY_FILE.name()
                + " does not belong to the certificate of "
                + IngressTlsConfig.CERT_FILE.name());
      }
    } catch (GeneralSecurityException e) {
      throw new IOException(
          IngressTlsConfig.KEY_FILE.name()
              + " does not belong to the certificate of "
              + IngressTlsConfig.CERT_FILE.name()
              + " ("
              + e.getMessage()
              + ")",
          e);
    }
  }
}
