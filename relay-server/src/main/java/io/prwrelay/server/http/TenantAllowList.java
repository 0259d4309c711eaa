package io.prwrelay.server.http;

import java.util.Collection;
import java.util.Set;

/**
 * The tenants one credential may write: any, or the listed tenant IDs (as sent downstream, {@code
 * relay.tenant.prefix} included). A request carrying a series of any other tenant is refused whole
 * with 403 naming the tenant, so that nothing of it is delivered.
 */
final class TenantAllowList {
  /** Every tenant: no auth, or a credential without a tenant list. */
  static final TenantAllowList ANY = new TenantAllowList(null);

  private final Set<String> tenants;

  private TenantAllowList(Set<String> tenants) {
    this.tenants = tenants;
  }

  /** Only {@code tenants}; {@link #ANY} when empty. */
  static TenantAllowList of(Collection<String> tenants) {
    return tenants.isEmpty() ? ANY : new TenantAllowList(Set.copyOf(tenants));
  }

  boolean allows(String tenant) {
    return tenants == null || tenants.contains(tenant);
  }

  /**
   * The answer to a request carrying a series of {@code tenant}, which this list does not allow.
   */
  static Answer forbidden(String tenant) {
    return Answer.of(403, "the credentials presented may not write tenant " + tenant);
  }
}
