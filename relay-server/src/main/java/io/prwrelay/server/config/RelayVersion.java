package io.prwrelay.server.config;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The relay's version, as built: printed by {@code --version} and the startup line, and sent in the
 * downstream {@code User-Agent}.
 */
public final class RelayVersion {
  /** Version string, e.g. {@code 0.1.0}; {@code unknown} when run from unpackaged classes. */
  public static final String VERSION = load();

  private RelayVersion() {}

  private static String load() {
    try (InputStream in = RelayVersion.class.getResourceAsStream("version.properties")) {
      if (in == null) {
        return "unknown";
      }
      Properties p = new Properties();
      p.load(in);
      String v = p.getProperty("version", "unknown");
      return v.startsWith("${") ? "unknown" : v;
    } catch (IOException e) {
      return "unknown";
    }
  }
}
