package io.prwrelay.server.write;

import java.util.Collection;
import java.util.Set;

/**
 * The tenants one credential may write: any, or the listed tenant IDs (as sent downstream, {@code
 * relay.tenant.prefix} included). A request carrying a series of any other tenant is refused whole
 * with 403 naming the tenant, so that nothing of it is delivered. Also names the credential (a
 * number derived from its secret's digest), which is part of the request's {@link SenderKey}.
 *
 * <p>Made by the ingress's inbound auth from a request's credentials and handed to the write
 * pipeline with the request ({@link WriteInput}), whose route step enforces it; the ingress also
 * asks it what {@code /metrics} and the tenant insight may show. Immutable.
 */
public final class TenantAllowList {
  /** Every tenant: no auth (no credential), or a test's credential without a tenant list. */
  public static final TenantAllowList ANY = new TenantAllowList(null, 0);

  private final Set<String> tenants;
  private final long credential;

  private TenantAllowList(Set<String> tenants, long credential) {
    this.tenants = tenants;
    this.credential = credential;
  }

  /** A new list of only {@code tenants}; of every tenant when empty. */
  public static TenantAllowList of(Collection<String> tenants) {
    return of(tenants, 0);
  }

  /**
   * Only {@code tenants} (every tenant when empty), for the credential identified by {@code
   * credential}.
   */
  public static TenantAllowList of(Collection<String> tenants, long credential) {
    if (tenants.isEmpty() && credential == 0) {
      return ANY;
    }
    return new TenantAllowList(tenants.isEmpty() ? null : Set.copyOf(tenants), credential);
  }

  /** The credential's identity, 0 without inbound auth: never a secret, never logged. */
  public long credential() {
    return credential;
  }

  /** Whether the credential may write (or read) {@code tenant}. */
  public boolean allows(String tenant) {
    return tenants == null || tenants.contains(tenant);
  }

  /** Whether every tenant is allowed: no list. */
  public boolean allowsAll() {
    return tenants == null;
  }

  /**
   * The answer to a request carrying a series of {@code tenant}, which this list does not allow.
   */
  static Answer forbidden(String tenant) {
    return Answer.of(403, "the credentials presented may not write tenant " + tenant);
  }
}
