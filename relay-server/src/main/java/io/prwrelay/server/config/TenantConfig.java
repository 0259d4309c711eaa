package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

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
 * <p>Declares the keys it reads but {@code relay.metrics.count-samples}, which {@link
 * MetricsConfig#COUNT_SAMPLES} declares.
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

  public static final ConfigKey LABELS =
      key(
          "relay.tenant.labels",
          TenantRules.DEFAULT_LABEL,
          "comma-separated tenant labels, each a valid Prometheus label name; the first one present"
              + " (in this order) wins");

  public static final ConfigKey MISSING =
      key(
          "relay.tenant.missing",
          "default",
          "series without a valid tenant: default, drop or reject (the request, with 400)");

  public static final ConfigKey DEFAULT_TENANT =
      key(
          "relay.tenant.default",
          TenantRules.DEFAULT_TENANT,
          "tenant for such series under default");

  public static final ConfigKey REMOVE_LABEL =
      key("relay.tenant.remove-label", "false", "strip the tenant label before forwarding");

  public static final ConfigKey PREFIX =
      key("relay.tenant.prefix", "", "prepended to every tenant ID");

  public static final ConfigKey TRUST_INCOMING_HEADER =
      key(
          "relay.tenant.trust-incoming-header",
          "false",
          "when a request carries the tenant header, send it whole to that tenant");

  public static final ConfigKey MAX_CACHED =
      key(
          "relay.tenant.max-cached",
          String.valueOf(TenantRules.DEFAULT_MAX_CACHED_TENANTS),
          "distinct tenant values remembered per event loop before the cache starts over");

  public static final ConfigKey MAX_PER_REQUEST =
      key(
          "relay.tenant.max-per-request",
          String.valueOf(TenantRules.DEFAULT_MAX_TENANTS_PER_REQUEST),
          "tenants one request may carry; a request with more is answered 400");

  public static final ConfigKey ALLOWED =
      key(
          "relay.tenant.allowed",
          "",
          "comma-separated tenant IDs (prefix included) series may go to; a series of any other"
              + " tenant is handled as one without a tenant (relay.tenant.missing) and counted with"
              + " reason not_allowed; the default tenant is always allowed; empty = any tenant");

  public static final ConfigKey HA_CLUSTER_LABEL =
      key(
          "relay.tenant.ha-cluster-label",
          HaLabels.DEFAULT_CLUSTER,
          "the downstream's HA cluster label (Cortex and Mimir ha_cluster_label): only batches"
              + " whose first series carry equal values of it and of the replica label travel in"
              + " one request; never removed");

  public static final ConfigKey HA_REPLICA_LABEL =
      key(
          "relay.tenant.ha-replica-label",
          HaLabels.DEFAULT_REPLICA,
          "the downstream's HA replica label (Cortex and Mimir ha_replica_label); as the cluster"
              + " label");

  public static final ConfigKey METADATA =
      key(
          "relay.metadata",
          "broadcast",
          "PRW 1.0 metadata: broadcast (to every tenant of the request; a request without series"
              + " sends each entry to the tenants that recently sent its metric family) or drop");

  public static final ConfigKey METADATA_MAX_BROADCAST_BYTES =
      key(
          "relay.metadata.max-broadcast-bytes",
          "16MiB",
          "most metadata bytes times tenants one request may copy; above it the request's"
              + " metadata (without series: the entries past the bound) is dropped (counted)");

  public static final ConfigKey METADATA_MAX_FAMILY_TENANTS =
      key(
          "relay.metadata.max-family-tenants",
          String.valueOf(TenantRules.DEFAULT_MAX_FAMILY_TENANTS),
          "metric family → tenant associations remembered to route metadata-only requests (a"
              + " family one sender sent to 3 tenants counts 3); beyond it the least recently seen"
              + " of the sender holding the most is forgotten (0 = learn nothing: such metadata goes"
              + " to the default tenant)");

  public static final ConfigKey METADATA_MAX_FAMILY_BYTES =
      key(
          "relay.metadata.max-family-bytes",
          "40MiB",
          "heap the metric family → tenant associations may take, their tables and the tenant IDs"
              + " they name together (65 bytes an association, 104 bytes plus its characters a"
              + " distinct tenant ID); beyond it the least recently seen of the sender holding the"
              + " most is forgotten; lowered to fit the heap when left at its default (0 = learn"
              + " nothing)");

  public static final ConfigKey METADATA_FAMILY_TTL =
      key(
          "relay.metadata.family-ttl",
          "10m",
          "a tenant stops receiving a family's metadata this long after its last series of that"
              + " family (at least 1s)");

  /** The keys of this section, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS =
      List.of(
          LABELS,
          MISSING,
          DEFAULT_TENANT,
          REMOVE_LABEL,
          PREFIX,
          TRUST_INCOMING_HEADER,
          MAX_CACHED,
          MAX_PER_REQUEST,
          ALLOWED,
          HA_CLUSTER_LABEL,
          HA_REPLICA_LABEL,
          METADATA,
          METADATA_MAX_BROADCAST_BYTES,
          METADATA_MAX_FAMILY_TENANTS,
          METADATA_MAX_FAMILY_BYTES,
          METADATA_FAMILY_TTL);

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
    boolean trust = v.bool(TRUST_INCOMING_HEADER);
    List<String> labels = v.labelNames(LABELS);
    TenantRules.Builder b =
        TenantRules.builder()
            .labels(labels)
            .missing(v.choice(MISSING, TenantRules.MissingPolicy.class))
            .defaultTenant(v.string(DEFAULT_TENANT))
            .prefix(v.string(PREFIX))
            .removeLabel(v.bool(REMOVE_LABEL))
            .metadata(v.choice(METADATA, TenantRules.MetadataPolicy.class))
            .maxBroadcastMetadataBytes(v.bytes(METADATA_MAX_BROADCAST_BYTES, 0, Long.MAX_VALUE))
            .maxFamilyTenants(v.integer(METADATA_MAX_FAMILY_TENANTS, 0, 10_000_000))
            .maxFamilyBytes(v.bytes(METADATA_MAX_FAMILY_BYTES, 0, 1L << 40))
            .familyTtl(v.duration(METADATA_FAMILY_TTL))
            .maxCachedTenants(v.integer(MAX_CACHED, 1, 100_000_000))
            .maxTenantsPerRequest(v.integer(MAX_PER_REQUEST, 1, 100_000_000))
            .countSamples(v.bool(MetricsConfig.COUNT_SAMPLES))
            .allowed(
                Arrays.stream(v.string(ALLOWED).split(","))
                    .map(String::trim)
                    .filter(t -> !t.isEmpty())
                    .toList());
    HaLabels ha = haLabels(v, labels);
    try {
      return new TenantConfig(b.build(), trust, tenantHeader, ha);
    } catch (TenantRules.InvalidSettingException e) {
      throw v.invalidWithoutValue(keyOf(e.setting()), e.problem());
    }
  }

  /**
   * The HA labels; refused when one of them is a tenant label that {@code
   * relay.tenant.remove-label} would strip: the downstream could no longer tell the replicas of an
   * HA pair apart.
   */
  private static HaLabels haLabels(ConfigValues v, List<String> tenantLabels)
      throws ConfigException {
    String cluster = single(v, HA_CLUSTER_LABEL);
    String replica = single(v, HA_REPLICA_LABEL);
    if (cluster.equals(replica)) {
      throw v.invalid(HA_REPLICA_LABEL, "must differ from " + HA_CLUSTER_LABEL.name());
    }
    HaLabels ha = new HaLabels(cluster, replica);
    if (v.bool(REMOVE_LABEL)) {
      for (String label : tenantLabels) {
        if (ha.isHaLabel(label)) {
          throw v.invalid(
              REMOVE_LABEL,
              "would remove the HA label "
                  + label
                  + " (a tenant label in "
                  + LABELS.name()
                  + ", and "
                  + (label.equals(cluster) ? HA_CLUSTER_LABEL : HA_REPLICA_LABEL).name()
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

  private static ConfigKey keyOf(TenantRules.Setting setting) {
    return switch (setting) {
      case LABELS -> LABELS;
      case DEFAULT -> DEFAULT_TENANT;
      case PREFIX -> PREFIX;
      case MAX_CACHED_TENANTS, MAX_CACHED_TENANT_BYTES -> MAX_CACHED;
      case MAX_TENANTS_PER_REQUEST -> MAX_PER_REQUEST;
      case MAX_BROADCAST_METADATA_BYTES -> METADATA_MAX_BROADCAST_BYTES;
      case MAX_FAMILY_TENANTS -> METADATA_MAX_FAMILY_TENANTS;
      case MAX_FAMILY_BYTES -> METADATA_MAX_FAMILY_BYTES;
      case FAMILY_TTL -> METADATA_FAMILY_TTL;
      case ALLOWED -> ALLOWED;
    };
  }
}
