package io.prwrelay.server.ingress;

import java.util.Locale;

/**
 * The relay's own endpoints, next to remote write: metrics, liveness, readiness and the tenant
 * insight.
 */
enum AdminEndpoint {
  /** Prometheus text exposition of the relay's metrics. */
  METRICS("/metrics"),
  /** 200 while the process runs. */
  HEALTHY("/-/healthy"),
  /** 200 once listening, 503 while starting or shutting down. */
  READY("/-/ready"),
  /** The tenant insight as an HTML page. */
  TENANTS("/tenants"),
  /** The tenant insight as JSON. */
  TENANTS_API("/api/v1/tenants");

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

  /**
   * Whether the endpoint needs the writers' credentials under {@code
   * relay.server.auth.protect-metrics}: what it shows is about tenants, like {@code /metrics}.
   */
  boolean protectedLikeMetrics() {
    return this == METRICS || this == TENANTS || this == TENANTS_API;
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
