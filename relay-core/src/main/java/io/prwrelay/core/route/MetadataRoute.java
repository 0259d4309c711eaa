package io.prwrelay.core.route;

/**
 * How the tenants of a PRW 1.0 {@code metadata} entry were chosen. Counted per request so metrics
 * can show each way.
 */
public enum MetadataRoute {
  /**
   * Copied into every tenant batch of a request that has series ({@code relay.metadata=broadcast}).
   */
  BROADCAST("broadcast"),
  /**
   * A request without series: sent to the tenants that recently sent series of the entry's family
   * ({@link MetricFamilies}).
   */
  FAMILY("family"),
  /**
   * A request without series: no tenant is known for the entry's family, so it went to the default
   * tenant ({@code relay.tenant.missing=default}).
   */
  DEFAULT("default");

  private final String tag;

  MetadataRoute(String tag) {
    this.tag = tag;
  }

  /** Lower-case name used in metric tags. */
  public String tag() {
    return tag;
  }
}
