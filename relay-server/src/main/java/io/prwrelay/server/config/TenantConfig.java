package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKeys.METADATA;
import static io.prwrelay.server.config.ConfigKeys.METADATA_FAMILY_TTL;
import static io.prwrelay.server.config.ConfigKeys.METADATA_MAX_BROADCAST_BYTES;
import static io.prwrelay.server.config.ConfigKeys.METADATA_MAX_FAMILY_TENANTS;
import static io.prwrelay.server.config.ConfigKeys.METRICS_COUNT_SAMPLES;
import static io.prwrelay.server.config.ConfigKeys.TENANT_ALLOWED;
import static io.prwrelay.server.config.ConfigKeys.TENANT_DEFAULT;
import static io.prwrelay.server.config.ConfigKeys.TENANT_LABELS;
import static io.prwrelay.server.config.ConfigKeys.TENANT_MAX_CACHED;
import static io.prwrelay.server.config.ConfigKeys.TENANT_MAX_PER_REQUEST;
import static io.prwrelay.server.config.ConfigKeys.TENANT_MISSING;
import static io.prwrelay.server.config.ConfigKeys.TENANT_PREFIX;
import static io.prwrelay.server.config.ConfigKeys.TENANT_REMOVE_LABEL;
import static io.prwrelay.server.config.ConfigKeys.TENANT_TRUST_INCOMING_HEADER;

import io.prwrelay.core.route.TenantIds;
import io.prwrelay.core.route.TenantRules;
import java.util.Arrays;
import java.util.List;

/**
 * How requests are split by tenant ({@code relay.tenant.*}, {@code relay.metadata}, and {@code
 * relay.metrics.count-samples}, which decides how far the router reads a series): the routing
 * rules, and whether a tenant header on an incoming request is trusted instead.
 *
 * @param rules how a series' tenant is found
 * @param trustIncomingHeader whether a request carrying {@code tenantHeader} goes whole to it
 * @param tenantHeader the tenant header (the one sent downstream, {@code
 *     relay.downstream.tenant-header})
 */
public record TenantConfig(TenantRules rules, boolean trustIncomingHeader, String tenantHeader) {

  /** The header whose value names a request's tenant, or {@code null} when none is trusted. */
  public String trustedHeader() {
    return trustIncomingHeader ? tenantHeader : null;
  }

  /**
   * The tenant ID for a trusted incoming header value: prefix + value, or {@code null} when that is
   * not a valid tenant ID.
   */
  public String incomingTenant(String headerValue) {
    String tenant = rules.prefix() + headerValue;
    return TenantIds.problem(tenant) == null ? tenant : null;
  }

  /**
   * @param tenantHeader the validated {@code relay.downstream.tenant-header}
   */
  static TenantConfig load(ConfigValues v, String tenantHeader) throws ConfigException {
    boolean trust = v.bool(TENANT_TRUST_INCOMING_HEADER);
    List<String> labels = v.labelNames(TENANT_LABELS);
    TenantRules.Builder b =
        TenantRules.builder()
            .labels(labels)
            .missing(v.choice(TENANT_MISSING, TenantRules.MissingPolicy.class))
            .defaultTenant(v.string(TENANT_DEFAULT))
            .prefix(v.string(TENANT_PREFIX))
            .removeLabel(v.bool(TENANT_REMOVE_LABEL))
            .metadata(v.choice(METADATA, TenantRules.MetadataPolicy.class))
            .maxBroadcastMetadataBytes(v.bytes(METADATA_MAX_BROADCAST_BYTES, 0, Long.MAX_VALUE))
            .maxFamilyTenants(v.integer(METADATA_MAX_FAMILY_TENANTS, 0, 10_000_000))
            .familyTtl(v.duration(METADATA_FAMILY_TTL))
            .maxCachedTenants(v.integer(TENANT_MAX_CACHED, 1, 100_000_000))
            .maxTenantsPerRequest(v.integer(TENANT_MAX_PER_REQUEST, 1, 100_000_000))
            .countSamples(v.bool(METRICS_COUNT_SAMPLES))
            .allowed(
                Arrays.stream(v.string(TENANT_ALLOWED).split(","))
                    .map(String::trim)
                    .filter(t -> !t.isEmpty())
                    .toList());
    try {
      return new TenantConfig(b.build(), trust, tenantHeader);
    } catch (TenantRules.InvalidSettingException e) {
      throw v.invalidWithoutValue(key(e.setting()), e.problem());
    }
  }

  private static ConfigKey key(TenantRules.Setting setting) {
    return switch (setting) {
      case LABELS -> TENANT_LABELS;
      case DEFAULT -> TENANT_DEFAULT;
      case PREFIX -> TENANT_PREFIX;
      case MAX_CACHED_TENANTS -> TENANT_MAX_CACHED;
      case MAX_TENANTS_PER_REQUEST -> TENANT_MAX_PER_REQUEST;
      case MAX_BROADCAST_METADATA_BYTES -> METADATA_MAX_BROADCAST_BYTES;
      case MAX_FAMILY_TENANTS -> METADATA_MAX_FAMILY_TENANTS;
      case FAMILY_TTL -> METADATA_FAMILY_TTL;
      case ALLOWED -> TENANT_ALLOWED;
    };
  }
}
