package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKeys.SERVER_TLS_CERT_FILE;
import static io.prwrelay.server.config.ConfigKeys.SERVER_TLS_CLIENT_AUTH;
import static io.prwrelay.server.config.ConfigKeys.SERVER_TLS_CLIENT_CA_FILE;
import static io.prwrelay.server.config.ConfigKeys.SERVER_TLS_KEY_FILE;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * TLS on the ingress ({@code relay.server.tls.*}): off unless a certificate and key are given; then
 * the ingress port speaks only TLS. The files are read at startup and again whenever they change.
 *
 * @param certFile PEM certificate chain, or {@code null} when TLS is off
 * @param keyFile PEM (PKCS#8) private key, or {@code null}
 * @param clientCaFile PEM CA certificates for client certificates, or {@code null}
 * @param clientAuth whether clients must present a certificate
 */
public record IngressTlsConfig(
    Path certFile, Path keyFile, Path clientCaFile, ClientAuth clientAuth) {

  /** Client certificate verification. */
  public enum ClientAuth {
    /** None asked for. */
    NONE,
    /** Asked for and verified when sent. */
    OPTIONAL,
    /** The handshake fails without a certificate signed by the client CA. */
    REQUIRE
  }

  /** Whether the ingress speaks TLS. */
  public boolean enabled() {
    return certFile != null;
  }

  static IngressTlsConfig load(ConfigValues v) throws ConfigException {
    Path cert = readable(v, SERVER_TLS_CERT_FILE);
    Path key = readable(v, SERVER_TLS_KEY_FILE);
    Path ca = readable(v, SERVER_TLS_CLIENT_CA_FILE);
    ClientAuth clientAuth = v.choice(SERVER_TLS_CLIENT_AUTH, ClientAuth.class);
    if (cert == null && key != null) {
      throw v.invalid(SERVER_TLS_KEY_FILE, "needs " + SERVER_TLS_CERT_FILE.name());
    }
    if (cert != null && key == null) {
      throw v.invalid(SERVER_TLS_CERT_FILE, "needs " + SERVER_TLS_KEY_FILE.name());
    }
    if (clientAuth != ClientAuth.NONE && ca == null) {
      throw v.invalid(SERVER_TLS_CLIENT_AUTH, "needs " + SERVER_TLS_CLIENT_CA_FILE.name());
    }
    if (cert == null && (ca != null || clientAuth != ClientAuth.NONE)) {
      throw v.invalid(
          ca != null ? SERVER_TLS_CLIENT_CA_FILE : SERVER_TLS_CLIENT_AUTH,
          "needs " + SERVER_TLS_CERT_FILE.name() + " and " + SERVER_TLS_KEY_FILE.name());
    }
    return new IngressTlsConfig(cert, key, ca, clientAuth);
  }

  private static Path readable(ConfigValues v, ConfigKey key) throws ConfigException {
    String s = v.string(key);
    if (s.isEmpty()) {
      return null;
    }
    Path p = Path.of(s);
    if (!Files.isReadable(p)) {
      throw v.invalid(key, "file " + s + " is not readable");
    }
    return p;
  }
}
