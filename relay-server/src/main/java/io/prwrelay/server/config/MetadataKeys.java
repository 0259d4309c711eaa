package io.prwrelay.server.config;

import static io.prwrelay.server.config.ConfigKey.key;

import io.prwrelay.core.route.TenantRules;
import java.util.List;

/**
 * The keys of PRW 1.0 metadata routing ({@code relay.metadata*}): whether metadata is broadcast to
 * a request's tenants, the copying bound, and the metric family → tenant associations that route
 * requests carrying metadata only.
 *
 * <p>One group of the catalogue: {@link ConfigKeys} names each of these keys and lists them, in the
 * order of {@link #KEYS}, for {@code --help}, docs/configuration.md and the loaders.
 */
final class MetadataKeys {
  private MetadataKeys() {}

  static final ConfigKey METADATA =
      key(
          "relay.metadata",
          "broadcast",
          "PRW 1.0 metadata: broadcast (to every tenant of the request; a request without series"
              + " sends each entry to the tenants that recently sent its metric family) or drop");

  static final ConfigKey MAX_BROADCAST_BYTES =
      key(
          "relay.metadata.max-broadcast-bytes",
          "16MiB",
          "most metadata bytes times tenants one request may copy; above it the request's"
              + " metadata (without series: the entries past the bound) is dropped (counted)");

  static final ConfigKey MAX_FAMILY_TENANTS =
      key(
          "relay.metadata.max-family-tenants",
          String.valueOf(TenantRules.DEFAULT_MAX_FAMILY_TENANTS),
          "metric family → tenant associations remembered to route metadata-only requests (a"
              + " family one sender sent to 3 tenants counts 3; about 71 bytes each); beyond it the"
              + " least recently seen of the sender holding the most is forgotten (0 = learn"
              + " nothing: such metadata goes to the default tenant)");

  static final ConfigKey FAMILY_TTL =
      key(
          "relay.metadata.family-ttl",
          "10m",
          "a tenant stops receiving a family's metadata this long after its last series of that"
              + " family (at least 1s)");

  /** The keys of this group, in the order {@code --help} and docs/configuration.md list them. */
  static final List<ConfigKey> KEYS =
      List.of(METADATA, MAX_BROADCAST_BYTES, MAX_FAMILY_TENANTS, FAMILY_TTL);
}
