package io.prwrelay.server.ingress;

/** Readiness of the server: ready once listening, not ready (and draining) once shutdown begins. */
final class ServerState {
  private volatile boolean listening;
  private volatile boolean draining;

  void listening() {
    listening = true;
  }

  void draining() {
    draining = true;
  }

  boolean ready() {
    return listening && !draining;
  }

  /** True once shutdown began: answers then close their connection. */
  boolean isDraining() {
    return draining;
  }

  String reason() {
    return draining ? "shutting down" : listening ? "" : "starting";
  }
}
