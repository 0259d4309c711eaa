package io.prwrelay.server.http;

import java.util.Locale;

/** The relay's own endpoints, next to remote write: metrics, liveness and readiness. */
enum AdminEndpoint {
  /** Prometheus text exposition of the relay's metrics. */
  METRICS("/metrics"),
  /** 200 while the process runs. */
  HEALTHY("/-/healthy"),
  /** 200 once listening, 503 while starting or shutting down. */
  READY("/-/ready");

  private final String path;

  AdminEndpoint(String path) {
    this.path = path;
  }

  String path() {
    return path;
  }

  /** Value of the {@code endpoint} label of {@code relay_http_requests_total}. */
  String tag() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The endpoint at {@code path}, or {@code null}. */
  static AdminEndpoint at(String path) {
    for (AdminEndpoint e : values()) {
      if (e.path.equals(path)) {
        return e;
      }
    }
    return null;
  }
}
