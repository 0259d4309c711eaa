package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKeys.METADATA;
import static io.prwrelay.server.config.ConfigKeys.METADATA_FAMILY_TTL;
import static io.prwrelay.server.config.ConfigKeys.METADATA_MAX_BROADCAST_BYTES;
import static io.prwrelay.server.config.ConfigKeys.METADATA_MAX_FAMILY_TENANTS;
import static io.prwrelay.server.config.ConfigKeys.METRICS_COUNT_SAMPLES;
import static io.prwrelay.server.config.ConfigKeys.TENANT_ALLOWED;
import static io.prwrelay.server.config.ConfigKeys.TENANT_DEFAULT;
import static io.prwrelay.server.config.ConfigKeys.TENANT_HA_CLUSTER_LABEL;
import static io.prwrelay.server.config.ConfigKeys.TENANT_HA_REPLICA_LABEL;
import static io.prwrelay.server.config.ConfigKeys.TENANT_LABELS;
import static io.prwrelay.server.config.ConfigKeys.TENANT_MAX_CACHED;
import static io.prwrelay.server.config.ConfigKeys.TENANT_MAX_PER_REQUEST;
import static io.prwrelay.server.config.ConfigKeys.TENANT_MISSING;
import static io.prwrelay.server.config.ConfigKeys.TENANT_PREFIX;
import static io.prwrelay.server.config.ConfigKeys.TENANT_REMOVE_LABEL;
import static io.prwrelay.server.config.ConfigKeys.TENANT_TRUST_INCOMING_HEADER;

import io.prwrelay.core.remotewrite.HaLabels;
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
 * @param haLabels the downstream's HA deduplication labels: batches travel together only when their
 *     first series carry the same values of both ({@code relay.tenant.ha-cluster-label}, {@code
 *     relay.tenant.ha-replica-label}); the relay never removes them
 */
public record TenantConfig(
    TenantRules rules, boolean trustIncomingHeader, String tenantHeader, HaLabels haLabels) {

  /** With the default HA labels, {@code cluster} and {@code __replica__}. */
  public TenantConfig(TenantRules rules, boolean trustIncomingHeader, String tenantHeader) {
    this(rules, trustIncomingHeader, tenantHeader, HaLabels.defaults());
  }

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
    HaLabels ha = haLabels(v, labels);
    try {
      return new TenantConfig(b.build(), trust, tenantHeader, ha);
    } catch (TenantRules.InvalidSettingException e) {
      throw v.invalidWithoutValue(key(e.setting()), e.problem());
    }
  }

  /**
   * The HA labels; refused when one of them is a tenant label that {@code
   * relay.tenant.remove-label} would strip: the downstream could no longer tell the replicas of an
   * HA pair apart.
   */
  private static HaLabels haLabels(ConfigValues v, List<String> tenantLabels)
      throws ConfigException {
    String cluster = single(v, TENANT_HA_CLUSTER_LABEL);
    String replica = single(v, TENANT_HA_REPLICA_LABEL);
    if (cluster.equals(replica)) {
      throw v.invalid(
          TENANT_HA_REPLICA_LABEL, "must differ from " + TENANT_HA_CLUSTER_LABEL.name());
    }
    HaLabels ha = new HaLabels(cluster, replica);
    if (v.bool(TENANT_REMOVE_LABEL)) {
      for (String label : tenantLabels) {
        if (ha.isHaLabel(label)) {
          throw v.invalid(
              TENANT_REMOVE_LABEL,
              "would remove the HA label "
                  + label
                  + " (a tenant label in "
                  + TENANT_LABELS.name()
                  + ", and "
                  + (label.equals(cluster) ? TENANT_HA_CLUSTER_LABEL : TENANT_HA_REPLICA_LABEL)
                      .name()
                  + "): the downstream could no longer tell an HA pair's replicas apart; set"
                  + " relay.tenant.remove-label=false or name other HA labels");
        }
      }
    }
    return ha;
  }

  /** The one label name {@code key} holds. */
  private static String single(ConfigValues v, ConfigKey key) throws ConfigException {
    List<String> names = v.labelNames(key);
    if (names.size() != 1) {
      throw v.invalid(key, "must be exactly one label name");
    }
    return names.get(0);
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
