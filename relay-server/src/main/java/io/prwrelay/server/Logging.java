package io.prwrelay.server;

/** One-line log format for java.util.logging (unless the user configured logging). */
final class Logging {
  private Logging() {}

  static void configure() {
    if (System.getProperty("java.util.logging.config.file") == null
        && System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
      System.setProperty(
          "java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tLZ %4$s %3$s: %5$s%6$s%n");
    }
  }
}
