package io.prwrelay.core.route;

/**
 * Why a PRW 1.0 {@code metadata} entry was not sent. Counted per request so metrics can show each
 * reason.
 */
public enum MetadataDrop {
  /**
   * Copying it into its tenants' batches would have passed {@link
   * TenantRules#maxBroadcastMetadataBytes()} for the request (a request with series drops all its
   * metadata then; a request without series the entries past the bound).
   */
  MAX_BROADCAST_BYTES("max_broadcast_bytes"),
  /**
   * A request without series: no tenant is known for the entry's family and {@code
   * relay.tenant.missing} is {@code drop} or {@code reject}.
   */
  UNKNOWN_FAMILY("unknown_family"),
  /**
   * A request without series: the entry's tenants would have taken the request past {@link
   * TenantRules#maxTenantsPerRequest()}.
   */
  TOO_MANY_TENANTS("too_many_tenants"),
  /** {@code relay.metadata=drop}. */
  POLICY("policy");

  private final String tag;

  MetadataDrop(String tag) {
    this.tag = tag;
  }

  /** Lower-case name used in metric tags. */
  public String tag() {
    return tag;
  }
}
