package io.prwrelay.core.route;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * How a series' tenant is found, and what happens to series without one. Immutable; build with
 * {@link #builder()}. Defaults are those of the {@code relay.tenant.*} and {@code relay.metadata}
 * keys.
 */
public final class TenantRules {
  /** What to do with a series that has no valid tenant label. */
  public enum MissingPolicy {
    /** Send it to the default tenant. */
    DEFAULT,
    /** Drop the series, count it, and relay the rest. */
    DROP,
    /** Reject the whole request with 400. */
    REJECT
  }

  /** What to do with {@code metadata} fields, which carry no labels and so no tenant. */
  public enum MetadataPolicy {
    /** Copy every metadata field into every tenant batch of the request. */
    BROADCAST,
    /** Drop metadata. */
    DROP
  }

  /** Default of {@code relay.tenant.labels}. */
  public static final String DEFAULT_LABEL = "service_id";

  /** Default of {@code relay.tenant.default}. */
  public static final String DEFAULT_TENANT = "anonymous";

  /** Default bound on label values remembered across requests before the table is reset. */
  public static final int DEFAULT_MAX_CACHED_TENANTS = 100_000;

  /** Default of {@code relay.tenant.max-per-request}. */
  public static final int DEFAULT_MAX_TENANTS_PER_REQUEST = 10_000;

  /** Default of {@code relay.metadata.max-broadcast-bytes}: 16 MiB per request. */
  public static final long DEFAULT_MAX_BROADCAST_METADATA_BYTES = 16L << 20;

  /**
   * Default of {@code relay.metadata.max-family-tenants}: family–tenant associations remembered for
   * routing metadata-only requests ({@link MetricFamilies}), about 65 bytes each, so about 32 MB of
   * tables when full, plus the tenant IDs they name, each once, all within {@link
   * #DEFAULT_MAX_FAMILY_BYTES}. Enough for 100,000 families sent by five tenants each, or 500
   * families (the runtime's and the HTTP library's) sent by each of 1,000 tenants.
   */
  public static final int DEFAULT_MAX_FAMILY_TENANTS = 500_000;

  /**
   * Default of {@code relay.metadata.max-family-bytes}: the heap {@link MetricFamilies} may take,
   * its tables and the tenant IDs they name together ({@link MetricFamilies#bytes()}). 40 MiB holds
   * the default 500,000 associations of short tenant IDs (their tables take 32.4 MB), or about
   * 150,000 associations that each name a tenant ID of 150 bytes of its own.
   */
  public static final long DEFAULT_MAX_FAMILY_BYTES = 40L << 20;

  /**
   * Default bound on the heap one router's tenant value cache takes before it starts over: 16 MiB,
   * about 120,000 IDs of 20 characters or 42,000 of the longest valid ones (150). Not a key of its
   * own: the relay lowers it when the retained structures would not fit the heap.
   */
  public static final long DEFAULT_MAX_CACHED_TENANT_BYTES = 16L << 20;

  /**
   * Default of {@code relay.metadata.family-ttl}: ten times Prometheus's default {@code
   * metadata_config.send_interval} (1m), so a tenant whose series come every scrape interval (even
   * a few minutes) keeps its families, and one that stopped sending a family stops getting its
   * metadata ten minutes later.
   */
  public static final Duration DEFAULT_FAMILY_TTL = Duration.ofMinutes(10);

  /**
   * Default of {@code relay.metrics.count-samples}: off. Counting PRW 1.0 samples means walking
   * every field of every series instead of stopping at the tenant label; measured on the real
   * payload it made the route step 1.3 to 1.5 times as expensive (BENCHMARKS.md, "Route step"), and
   * Cortex and Mimir count what they receive per tenant themselves.
   */
  public static final boolean DEFAULT_COUNT_SAMPLES = false;

  private final List<String> labels;
  private final MissingPolicy missing;
  private final String defaultTenant;
  private final String prefix;
  private final boolean removeLabel;
  private final MetadataPolicy metadata;
  private final long maxBroadcastMetadataBytes;
  private final int maxCachedTenants;
  private final int maxTenantsPerRequest;
  private final boolean countSamples;
  private final int maxFamilyTenants;
  private final long maxFamilyBytes;
  private final long maxCachedTenantBytes;
  private final Duration familyTtl;
  private final Set<String> allowed;

  private TenantRules(Builder b) {
    this.labels = List.copyOf(b.labels);
    this.missing = b.missing;
    this.defaultTenant = b.defaultTenant;
    this.prefix = b.prefix;
    this.removeLabel = b.removeLabel;
    this.metadata = b.metadata;
    this.maxBroadcastMetadataBytes = b.maxBroadcastMetadataBytes;
    this.maxCachedTenants = b.maxCachedTenants;
    this.maxTenantsPerRequest = b.maxTenantsPerRequest;
    this.countSamples = b.countSamples;
    this.maxFamilyTenants = b.maxFamilyTenants;
    this.maxFamilyBytes = b.maxFamilyBytes;
    this.maxCachedTenantBytes = b.maxCachedTenantBytes;
    this.familyTtl = b.familyTtl;
    this.allowed = Set.copyOf(b.allowed);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these rules' settings, to change some of them. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.labels = new ArrayList<>(labels);
    b.missing = missing;
    b.defaultTenant = defaultTenant;
    b.prefix = prefix;
    b.removeLabel = removeLabel;
    b.metadata = metadata;
    b.maxCachedTenants = maxCachedTenants;
    b.maxCachedTenantBytes = maxCachedTenantBytes;
    b.maxTenantsPerRequest = maxTenantsPerRequest;
    b.maxBroadcastMetadataBytes = maxBroadcastMetadataBytes;
    b.countSamples = countSamples;
    b.maxFamilyTenants = maxFamilyTenants;
    b.maxFamilyBytes = maxFamilyBytes;
    b.familyTtl = familyTtl;
    b.allowed = List.copyOf(allowed);
    return b;
  }

  /** Tenant label names in priority order; the first present in a series wins. */
  public List<String> labels() {
    return labels;
  }

  public MissingPolicy missing() {
    return missing;
  }

  /** Default tenant without the prefix. */
  public String defaultTenant() {
    return defaultTenant;
  }

  /** The default tenant's ID as sent downstream: prefix + default tenant. */
  public String defaultTenantId() {
    return prefix + defaultTenant;
  }

  public String prefix() {
    return prefix;
  }

  /**
   * The tenant IDs (prefix included) series may go to; empty for any. A series whose tenant is
   * another one is treated as a series without a valid tenant ({@link TenantProblem#NOT_ALLOWED},
   * {@link #missing()}); the default tenant is always allowed.
   */
  public Set<String> allowed() {
    return allowed;
  }

  /** Whether the label that resolved a series' tenant is removed before forwarding. */
  public boolean removeLabel() {
    return removeLabel;
  }

  public MetadataPolicy metadata() {
    return metadata;
  }

  /**
   * Most metadata bytes one request may copy into its tenant batches under {@link
   * MetadataPolicy#BROADCAST}: the request's metadata bytes times its tenants. Above it the
   * request's metadata is dropped and counted ({@link RouteResult#metadataDropped()}), so a request
   * with many tenants cannot multiply its metadata into memory without bound.
   */
  public long maxBroadcastMetadataBytes() {
    return maxBroadcastMetadataBytes;
  }

  /** Distinct tenant label values a router remembers before it starts over. */
  public int maxCachedTenants() {
    return maxCachedTenants;
  }

  /**
   * Most heap one router's tenant value cache takes before it starts over, whatever {@link
   * #maxCachedTenants()} allows ({@link #DEFAULT_MAX_CACHED_TENANT_BYTES}).
   */
  public long maxCachedTenantBytes() {
    return maxCachedTenantBytes;
  }

  /**
   * Most tenants one request may carry: a request with more is rejected as soon as the reader meets
   * the first tenant over the bound, before any batch is built ({@code
   * RequestError.Kind.TOO_MANY_TENANTS}), so one request cannot fan out into an unbounded number of
   * batches and downstream requests.
   */
  public int maxTenantsPerRequest() {
    return maxTenantsPerRequest;
  }

  /**
   * Whether the PRW 1.0 router counts each batch's samples, exemplars and histograms. When it does
   * not, it stops reading a series once its highest-priority tenant label is found and skips the
   * rest by length: those counts are then 0 (series are always counted). PRW 2.0 routing always
   * counts: it walks every field of a series anyway, for the exemplar and metadata refs, and a PRW
   * 2.0 sender is told what was written.
   */
  public boolean countSamples() {
    return countSamples;
  }

  /**
   * Most family–tenant associations kept to route PRW 1.0 metadata-only requests ({@link
   * MetricFamilies}); 0 learns nothing, and such requests' metadata goes to the default tenant (or
   * is dropped, by {@link #missing()}).
   */
  public int maxFamilyTenants() {
    return maxFamilyTenants;
  }

  /**
   * Most heap {@link MetricFamilies} takes, its tables and the tenant IDs they name together;
   * beyond it the least recently seen association of the sender holding the most is forgotten, as
   * beyond {@link #maxFamilyTenants()}.
   */
  public long maxFamilyBytes() {
    return maxFamilyBytes;
  }

  /** How long a tenant stays associated with a metric family after its last series of it. */
  public Duration familyTtl() {
    return familyTtl;
  }

  @Override
  public String toString() {
    return "labels="
        + labels
        + " missing="
        + missing.name().toLowerCase(Locale.ROOT)
        + " default="
        + defaultTenantId()
        + " prefix='"
        + prefix
        + "' remove-label="
        + removeLabel
        + " metadata="
        + metadata.name().toLowerCase(Locale.ROOT)
        + " max-family-tenants="
        + maxFamilyTenants
        + " max-family-bytes="
        + maxFamilyBytes
        + " count-samples="
        + countSamples
        + (allowed.isEmpty() ? "" : " allowed=" + allowed.size() + " tenants");
  }

  /** A setting of {@link Builder} that {@link Builder#build()} can reject. */
  public enum Setting {
    LABELS,
    DEFAULT,
    PREFIX,
    MAX_CACHED_TENANTS,
    MAX_CACHED_TENANT_BYTES,
    MAX_BROADCAST_METADATA_BYTES,
    MAX_TENANTS_PER_REQUEST,
    MAX_FAMILY_TENANTS,
    MAX_FAMILY_BYTES,
    FAMILY_TTL,
    ALLOWED
  }

  /**
   * An unusable builder value: which {@link Setting}, and the problem, phrased to follow the
   * setting's name ("prefix: 'a/' is not a valid tenant ID prefix (invalid_character)").
   */
  public static final class InvalidSettingException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final Setting setting;
    private final String problem;

    InvalidSettingException(Setting setting, String problem) {
      super(setting.name().toLowerCase(Locale.ROOT).replace('_', '-') + ": " + problem);
      this.setting = setting;
      this.problem = problem;
    }

    public Setting setting() {
      return setting;
    }

    /** What is wrong, without the setting's name. */
    public String problem() {
      return problem;
    }
  }

  /** Builder of {@link TenantRules}; {@link #build()} validates and names the offending setting. */
  public static final class Builder {
    private List<String> labels = List.of(DEFAULT_LABEL);
    private MissingPolicy missing = MissingPolicy.DEFAULT;
    private String defaultTenant = DEFAULT_TENANT;
    private String prefix = "";
    private boolean removeLabel;
    private MetadataPolicy metadata = MetadataPolicy.BROADCAST;
    private int maxCachedTenants = DEFAULT_MAX_CACHED_TENANTS;
    private int maxTenantsPerRequest = DEFAULT_MAX_TENANTS_PER_REQUEST;
    private long maxBroadcastMetadataBytes = DEFAULT_MAX_BROADCAST_METADATA_BYTES;
    private boolean countSamples = DEFAULT_COUNT_SAMPLES;
    private int maxFamilyTenants = DEFAULT_MAX_FAMILY_TENANTS;
    private long maxFamilyBytes = DEFAULT_MAX_FAMILY_BYTES;
    private long maxCachedTenantBytes = DEFAULT_MAX_CACHED_TENANT_BYTES;
    private Duration familyTtl = DEFAULT_FAMILY_TTL;
    private Collection<String> allowed = List.of();

    private Builder() {}

    /** See {@link TenantRules#allowed()}. */
    public Builder allowed(Collection<String> allowed) {
      this.allowed = List.copyOf(allowed);
      return this;
    }

    public Builder labels(List<String> labels) {
      this.labels = new ArrayList<>(Objects.requireNonNull(labels));
      return this;
    }

    public Builder labels(String... labels) {
      return labels(List.of(labels));
    }

    public Builder missing(MissingPolicy missing) {
      this.missing = Objects.requireNonNull(missing);
      return this;
    }

    public Builder defaultTenant(String defaultTenant) {
      this.defaultTenant = Objects.requireNonNull(defaultTenant);
      return this;
    }

    public Builder prefix(String prefix) {
      this.prefix = Objects.requireNonNull(prefix);
      return this;
    }

    public Builder removeLabel(boolean removeLabel) {
      this.removeLabel = removeLabel;
      return this;
    }

    public Builder metadata(MetadataPolicy metadata) {
      this.metadata = Objects.requireNonNull(metadata);
      return this;
    }

    public Builder maxBroadcastMetadataBytes(long maxBroadcastMetadataBytes) {
      this.maxBroadcastMetadataBytes = maxBroadcastMetadataBytes;
      return this;
    }

    public Builder maxCachedTenants(int maxCachedTenants) {
      this.maxCachedTenants = maxCachedTenants;
      return this;
    }

    public Builder maxTenantsPerRequest(int maxTenantsPerRequest) {
      this.maxTenantsPerRequest = maxTenantsPerRequest;
      return this;
    }

    /** See {@link TenantRules#countSamples()}. */
    public Builder countSamples(boolean countSamples) {
      this.countSamples = countSamples;
      return this;
    }

    /** See {@link TenantRules#maxFamilyTenants()}. */
    public Builder maxFamilyTenants(int maxFamilyTenants) {
      this.maxFamilyTenants = maxFamilyTenants;
      return this;
    }

    /** See {@link TenantRules#maxFamilyBytes()}. */
    public Builder maxFamilyBytes(long maxFamilyBytes) {
      this.maxFamilyBytes = maxFamilyBytes;
      return this;
    }

    /** See {@link TenantRules#maxCachedTenantBytes()}. */
    public Builder maxCachedTenantBytes(long maxCachedTenantBytes) {
      this.maxCachedTenantBytes = maxCachedTenantBytes;
      return this;
    }

    /** See {@link TenantRules#familyTtl()}. */
    public Builder familyTtl(Duration familyTtl) {
      this.familyTtl = Objects.requireNonNull(familyTtl);
      return this;
    }

    /**
     * @throws InvalidSettingException naming the setting and what is wrong with its value
     */
    public TenantRules build() {
      if (labels.isEmpty()) {
        throw new InvalidSettingException(Setting.LABELS, "must name at least one tenant label");
      }
      for (String label : labels) {
        if (label.isEmpty()) {
          throw new InvalidSettingException(Setting.LABELS, "has an empty label name in " + labels);
        }
      }
      if (new LinkedHashSet<>(labels).size() != labels.size()) {
        throw new InvalidSettingException(
            Setting.LABELS, "has a duplicate label name in " + labels);
      }
      if (!prefix.isEmpty()) {
        TenantProblem p = TenantIds.problem(prefix);
        if (p == TenantProblem.INVALID_CHARACTER || p == TenantProblem.TOO_LONG) {
          throw new InvalidSettingException(
              Setting.PREFIX, "'" + prefix + "' is not a valid tenant ID prefix (" + p.tag() + ")");
        }
      }
      TenantProblem p = TenantIds.problem(prefix + defaultTenant);
      if (p != null) {
        throw new InvalidSettingException(
            Setting.DEFAULT,
            "'" + prefix + defaultTenant + "' is not a valid tenant ID (" + p.tag() + ")");
      }
      if (maxBroadcastMetadataBytes < 0) {
        throw new InvalidSettingException(
            Setting.MAX_BROADCAST_METADATA_BYTES, "must not be negative");
      }
      if (maxCachedTenants < 1) {
        throw new InvalidSettingException(Setting.MAX_CACHED_TENANTS, "must be at least 1");
      }
      if (maxTenantsPerRequest < 1) {
        throw new InvalidSettingException(Setting.MAX_TENANTS_PER_REQUEST, "must be at least 1");
      }
      if (maxFamilyTenants < 0) {
        throw new InvalidSettingException(Setting.MAX_FAMILY_TENANTS, "must not be negative");
      }
      if (maxFamilyBytes < 0) {
        throw new InvalidSettingException(Setting.MAX_FAMILY_BYTES, "must not be negative");
      }
      if (maxCachedTenantBytes < 1) {
        throw new InvalidSettingException(Setting.MAX_CACHED_TENANT_BYTES, "must be at least 1");
      }
      for (String id : allowed) {
        TenantProblem bad = TenantIds.problem(id);
        if (bad != null) {
          throw new InvalidSettingException(
              Setting.ALLOWED, "'" + id + "' is not a valid tenant ID (" + bad.tag() + ")");
        }
      }
      if (familyTtl.compareTo(Duration.ofSeconds(1)) < 0) {
        throw new InvalidSettingException(Setting.FAMILY_TTL, "must be at least 1s");
      }
      return new TenantRules(this);
    }
  }
}
