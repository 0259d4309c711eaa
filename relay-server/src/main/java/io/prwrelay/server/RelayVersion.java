package io.prwrelay.server;

/**
 * The relay's version under the name it had before it moved to {@link
 * io.prwrelay.server.config.RelayVersion}, where the downstream client can read it. Kept only for
 * the integration tests that still import this name; remove it once they import the new one.
 */
public final class RelayVersion {
  /** Same as {@link io.prwrelay.server.config.RelayVersion#VERSION}. */
  public static final String VERSION = io.prwrelay.server.config.RelayVersion.VERSION;

  private RelayVersion() {}
}
