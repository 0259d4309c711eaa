package io.prwrelay.testing;

import com.google.protobuf.CodedOutputStream;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.core.route.TenantProblem;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reference answers computed the slow, obvious way on oracle objects: which tenant a series belongs
 * to under the relay's rules. Independent of the relay's byte-level code.
 */
public final class Oracle {
  private static final Pattern TENANT = Pattern.compile("[a-zA-Z0-9!\\-_.*'()]+");
  private static final List<String> RESERVED =
      List.of(".", "..", "__markers__", "user-index.json.gz");

  private Oracle() {}

  /**
   * Result of resolving one series: tenant ID (null when none) and the label index that resolved
   * it.
   */
  public record Resolution(String tenant, int labelIndex, String problem) {}

  /**
   * Resolves a series: the first label of {@code tenantLabels} present with a non-empty value wins;
   * its value, prefixed, must be a valid Cortex tenant ID.
   */
  public static Resolution resolve(TimeSeries ts, List<String> tenantLabels, String prefix) {
    for (String name : tenantLabels) {
      List<Label> labels = ts.getLabelsList();
      for (int i = 0; i < labels.size(); i++) {
        Label l = labels.get(i);
        if (l.getName().equals(name) && !l.getValue().isEmpty()) {
          String id = prefix + l.getValue();
          String problem = problem(id);
          return problem == null ? new Resolution(id, i, null) : new Resolution(null, -1, problem);
        }
      }
    }
    return new Resolution(null, -1, "missing");
  }

  /**
   * Index of the first series of {@code request} without a valid tenant under {@code tenantLabels}
   * (no prefix), or -1: where a request is rejected under the reject policy.
   */
  public static int firstSeriesWithoutTenant(WriteRequest request, List<String> tenantLabels) {
    for (int i = 0; i < request.getTimeseriesCount(); i++) {
      if (resolve(request.getTimeseries(i), tenantLabels, "").tenant() == null) {
        return i;
      }
    }
    return -1;
  }

  /** Why {@code id} is not a valid tenant ID, or null. */
  public static String problem(String id) {
    if (id.getBytes(StandardCharsets.UTF_8).length > 150) {
      return "too_long";
    }
    if (!TENANT.matcher(id).matches()) {
      return "invalid_character";
    }
    if (RESERVED.contains(id)) {
      return "reserved";
    }
    return null;
  }

  /**
   * Expected batches per tenant under {@code rules}, in order of each tenant's first series,
   * computed on oracle objects, for a router that has learned no metric family yet; counts series
   * without a valid tenant into {@code problems}.
   */
  public static Map<String, WriteRequest> expectedBatches(
      WriteRequest request, TenantRules rules, Map<TenantProblem, Integer> problems) {
    return expectedBatches(request, rules, problems, new Families());
  }

  /**
   * Expected batches per tenant under {@code rules} for a router that has learned {@code families}
   * from the requests it routed before; {@code families} then learns this request's series. A
   * request without series left to send has its metadata routed by family: each entry to the
   * tenants that sent its family, else to the default tenant under {@code missing=default}, else
   * nowhere.
   */
  public static Map<String, WriteRequest> expectedBatches(
      WriteRequest request,
      TenantRules rules,
      Map<TenantProblem, Integer> problems,
      Families families) {
    Map<String, WriteRequest.Builder> byTenant = new LinkedHashMap<>();
    for (TimeSeries ts : request.getTimeseriesList()) {
      Resolution r = resolve(ts, rules.labels(), rules.prefix());
      String tenant = destination(r, rules, problems);
      if (tenant == null) {
        continue;
      }
      TimeSeries out =
          r.tenant() != null && rules.removeLabel() ? withoutLabel(ts, r.labelIndex()) : ts;
      byTenant.computeIfAbsent(tenant, k -> WriteRequest.newBuilder()).addTimeseries(out);
    }
    Map<String, WriteRequest> result = new LinkedHashMap<>();
    if (byTenant.isEmpty() && rules.metadata() == TenantRules.MetadataPolicy.BROADCAST) {
      long copied = 0;
      for (MetricMetadata m : request.getMetadataList()) {
        Set<String> tenants =
            rules.maxFamilyTenants() > 0
                ? families.tenantsOf(m.getMetricFamilyName())
                : new LinkedHashSet<>();
        if (tenants.isEmpty() && rules.missing() == TenantRules.MissingPolicy.DEFAULT) {
          tenants.add(rules.defaultTenantId());
        }
        long bytes = (long) CodedOutputStream.computeMessageSize(3, m) * tenants.size();
        if (tenants.isEmpty() || copied + bytes > rules.maxBroadcastMetadataBytes()) {
          continue;
        }
        copied += bytes;
        for (String t : tenants) {
          byTenant.computeIfAbsent(t, k -> WriteRequest.newBuilder()).addMetadata(m);
        }
      }
      byTenant.forEach((tenant, b) -> result.put(tenant, b.build()));
      return result;
    }
    byTenant.forEach(
        (tenant, b) -> {
          if (rules.metadata() == TenantRules.MetadataPolicy.BROADCAST) {
            b.addAllMetadata(request.getMetadataList());
          }
          result.put(tenant, b.build());
        });
    for (TimeSeries ts : request.getTimeseriesList()) {
      String tenant =
          destination(resolve(ts, rules.labels(), rules.prefix()), rules, new HashMap<>());
      if (tenant != null) {
        families.learn(name(ts), tenant);
      }
    }
    return result;
  }

  /** The value of the series' first {@code __name__} label, or {@code ""}. */
  private static String name(TimeSeries ts) {
    for (Label l : ts.getLabelsList()) {
      if (l.getName().equals("__name__")) {
        return l.getValue();
      }
    }
    return "";
  }

  /**
   * Which tenants sent which metric families, the obvious way: a series' metric name without one
   * trailing {@code _total}, {@code _created}, {@code _bucket}, {@code _count}, {@code _sum},
   * {@code _gcount}, {@code _gsum} or {@code _info} names its family; a metadata family name
   * matches as it is and without such a suffix. Nothing expires (tests run within the TTL).
   */
  public static final class Families {
    private static final List<String> SUFFIXES =
        List.of("_total", "_created", "_bucket", "_count", "_sum", "_gcount", "_gsum", "_info");
    private final Map<String, Set<String>> byFamily = new HashMap<>();

    /** Records that {@code tenant} sent a series named {@code name}. */
    public void learn(String name, String tenant) {
      if (!name.isEmpty()) {
        byFamily.computeIfAbsent(stem(name), k -> new LinkedHashSet<>()).add(tenant);
      }
    }

    /** The tenants that sent a series of the family {@code familyName}, in no useful order. */
    public Set<String> tenantsOf(String familyName) {
      Set<String> out = new LinkedHashSet<>();
      if (!familyName.isEmpty()) {
        out.addAll(byFamily.getOrDefault(familyName, Set.of()));
        out.addAll(byFamily.getOrDefault(stem(familyName), Set.of()));
      }
      return out;
    }

    /** {@code name} without one trailing family suffix, when something is left before it. */
    public static String stem(String name) {
      for (String s : SUFFIXES) {
        if (name.length() > s.length() && name.endsWith(s)) {
          return name.substring(0, name.length() - s.length());
        }
      }
      return name;
    }
  }

  /**
   * The tenant a series goes to under {@code rules}: its own, the default tenant, or {@code null}
   * when it is dropped; a series without a valid tenant is counted into {@code problems}.
   */
  public static String destination(
      Resolution r, TenantRules rules, Map<TenantProblem, Integer> problems) {
    if (r.tenant() != null) {
      return r.tenant();
    }
    problems.merge(TenantProblem.valueOf(r.problem().toUpperCase(Locale.ROOT)), 1, Integer::sum);
    return rules.missing() == TenantRules.MissingPolicy.DEFAULT ? rules.defaultTenantId() : null;
  }

  /** What {@code request} carries, counted on the oracle objects. */
  public static SeriesCounts counts(WriteRequest request) {
    long samples = 0;
    long exemplars = 0;
    long histograms = 0;
    for (TimeSeries ts : request.getTimeseriesList()) {
      samples += ts.getSamplesCount();
      exemplars += ts.getExemplarsCount();
      histograms += ts.getHistogramsCount();
    }
    return new SeriesCounts(request.getTimeseriesCount(), samples, exemplars, histograms);
  }

  /** The series without label {@code index}. */
  public static TimeSeries withoutLabel(TimeSeries ts, int index) {
    return ts.toBuilder().removeLabels(index).build();
  }
}
