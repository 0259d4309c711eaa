package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * TLS on the ingress ({@code relay.server.tls.*}): off unless a certificate and key are given; then
 * the ingress port speaks only TLS. The files are read at startup and again whenever they change.
 *
 * <p>Declares the keys it reads.
 *
 * @param certFile PEM certificate chain, or {@code null} when TLS is off
 * @param keyFile PEM (PKCS#8) private key, or {@code null}
 * @param clientCaFile PEM CA certificates for client certificates, or {@code null}
 * @param clientAuth whether clients must present a certificate
 */
public record IngressTlsConfig(
    Path certFile, Path keyFile, Path clientCaFile, ClientAuth clientAuth) {

  public static final ConfigKey CERT_FILE =
      key(
          "relay.server.tls.cert-file",
          "",
          "PEM certificate chain of the ingress; with key-file, the ingress speaks only TLS"
              + " (1.3 and 1.2); re-read on change");

  public static final ConfigKey KEY_FILE =
      key(
          "relay.server.tls.key-file",
          "",
          "PEM private key (PKCS#8, unencrypted) of that certificate; re-read on change");

  public static final ConfigKey CLIENT_CA_FILE =
      key(
          "relay.server.tls.client-ca-file",
          "",
          "PEM CA certificates that sign accepted client certificates; re-read on change");

  public static final ConfigKey CLIENT_AUTH =
      key(
          "relay.server.tls.client-auth",
          "none",
          "client certificates: none, optional (verified when sent) or require");

  /** The keys of this section, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS = List.of(CERT_FILE, KEY_FILE, CLIENT_CA_FILE, CLIENT_AUTH);

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
    Path cert = readable(v, CERT_FILE);
    Path key = readable(v, KEY_FILE);
    Path ca = readable(v, CLIENT_CA_FILE);
    ClientAuth clientAuth = v.choice(CLIENT_AUTH, ClientAuth.class);
    if (cert == null && key != null) {
      throw v.invalid(KEY_FILE, "needs " + CERT_FILE.name());
    }
    if (cert != null && key == null) {
      throw v.invalid(CERT_FILE, "needs " + KEY_FILE.name());
    }
    if (clientAuth != ClientAuth.NONE && ca == null) {
      throw v.invalid(CLIENT_AUTH, "needs " + CLIENT_CA_FILE.name());
    }
    if (cert == null && (ca != null || clientAuth != ClientAuth.NONE)) {
      throw v.invalid(
          ca != null ? CLIENT_CA_FILE : CLIENT_AUTH,
          "needs " + CERT_FILE.name() + " and " + KEY_FILE.name());
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
