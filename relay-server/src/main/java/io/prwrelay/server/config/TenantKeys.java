package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import io.prwrelay.core.remotewrite.HaLabels;
import io.prwrelay.core.route.TenantRules;
import java.util.List;

/**
 * The keys of tenant routing ({@code relay.tenant.*}): which labels name a series' tenant, what
 * happens to a series without one, how tenant IDs are rewritten, and how many tenants one request
 * and the per-loop cache may hold.
 *
 * <p>One group of the catalogue: {@link ConfigKeys} names each of these keys and lists them, in the
 * order of {@link #KEYS}, for {@code --help}, docs/configuration.md and the loaders.
 */
final class TenantKeys {
  private TenantKeys() {}

  static final ConfigKey LABELS =
      key(
          "relay.tenant.labels",
          TenantRules.DEFAULT_LABEL,
          "comma-separated tenant labels, each a valid Prometheus label name; the first one present"
              + " (in this order) wins");

  static final ConfigKey MISSING =
      key(
          "relay.tenant.missing",
          "default",
          "series without a valid tenant: default, drop or reject (the request, with 400)");

  static final ConfigKey DEFAULT =
      key(
          "relay.tenant.default",
          TenantRules.DEFAULT_TENANT,
          "tenant for such series under default");

  static final ConfigKey REMOVE_LABEL =
      key("relay.tenant.remove-label", "false", "strip the tenant label before forwarding");

  static final ConfigKey PREFIX = key("relay.tenant.prefix", "", "prepended to every tenant ID");

  static final ConfigKey TRUST_INCOMING_HEADER =
      key(
          "relay.tenant.trust-incoming-header",
          "false",
          "when a request carries the tenant header, send it whole to that tenant");

  static final ConfigKey MAX_CACHED =
      key(
          "relay.tenant.max-cached",
          String.valueOf(TenantRules.DEFAULT_MAX_CACHED_TENANTS),
          "distinct tenant values remembered per event loop before the cache starts over");

  static final ConfigKey MAX_PER_REQUEST =
      key(
          "relay.tenant.max-per-request",
          String.valueOf(TenantRules.DEFAULT_MAX_TENANTS_PER_REQUEST),
          "tenants one request may carry; a request with more is answered 400");

  static final ConfigKey ALLOWED =
      key(
          "relay.tenant.allowed",
          "",
          "comma-separated tenant IDs (prefix included) series may go to; a series of any other"
              + " tenant is handled as one without a tenant (relay.tenant.missing) and counted with"
              + " reason not_allowed; the default tenant is always allowed; empty = any tenant");

  static final ConfigKey HA_CLUSTER_LABEL =
      key(
          "relay.tenant.ha-cluster-label",
          HaLabels.DEFAULT_CLUSTER,
          "the downstream's HA cluster label (Cortex and Mimir ha_cluster_label): only batches"
              + " whose first series carry equal values of it and of the replica label travel in"
              + " one request; never removed");

  static final ConfigKey HA_REPLICA_LABEL =
      key(
          "relay.tenant.ha-replica-label",
          HaLabels.DEFAULT_REPLICA,
          "the downstream's HA replica label (Cortex and Mimir ha_replica_label); as the cluster"
              + " label");

  /** The keys of this group, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS =
      List.of(
          LABELS,
          MISSING,
          DEFAULT,
          REMOVE_LABEL,
          PREFIX,
          TRUST_INCOMING_HEADER,
          MAX_CACHED,
          MAX_PER_REQUEST,
          ALLOWED,
          HA_CLUSTER_LABEL,
          HA_REPLICA_LABEL);
}
