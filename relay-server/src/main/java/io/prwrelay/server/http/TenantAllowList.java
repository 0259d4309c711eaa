package io.prwrelay.server.http;

import java.util.Collection;
import java.util.Set;

/**
 * The tenants one credential may write: any, or the listed tenant IDs (as sent downstream, {@code
 * relay.tenant.prefix} included). A request carrying a series of any other tenant is refused whole
 * with 403 naming the tenant, so that nothing of it is delivered. The same list says which tenants'
 * rows and metrics the credential may read ({@link AdminHandler}).
 *
 * <p>Each credential has a list of its own, also when it allows every tenant, so that the list also
 * tells one credential from another ({@link SenderIdentity}).
 */
final class TenantAllowList {
  /** Every tenant, with no auth: the one list of every request. */
  static final TenantAllowList ANY = new TenantAllowList(null);

  private final Set<String> tenants;

  private TenantAllowList(Set<String> tenants) {
    this.tenants = tenants;
  }

  /** A new list of only {@code tenants}; of every tenant when empty. */
  static TenantAllowList of(Collection<String> tenants) {
    return new TenantAllowList(tenants.isEmpty() ? null : Set.copyOf(tenants));
  }

  boolean allows(String tenant) {
    return tenants == null || tenants.contains(tenant);
  }

  /** Whether every tenant is allowed: no list. */
  boolean allowsAll() {
    return tenants == null;
  }

  /**
   * The answer to a request carrying a series of {@code tenant}, which this list does not allow.
   */
  static Answer forbidden(String tenant) {
    return Answer.of(403, "the credentials presented may not write tenant " + tenant);
  }
}
