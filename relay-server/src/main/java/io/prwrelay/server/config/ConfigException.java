package io.prwrelay.server.config;

/** A configuration problem; the message names the key and what is wrong with its value. */
public final class ConfigException extends Exception {
  private static final long serialVersionUID = 1L;

  public ConfigException(String message) {
    super(message);
  }
}
