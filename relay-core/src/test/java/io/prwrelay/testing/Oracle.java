package io.prwrelay.testing;

import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.core.route.TenantProblem;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
   * computed on oracle objects; counts series without a valid tenant into {@code problems}.
   */
  public static Map<String, WriteRequest> expectedBatches(
      WriteRequest request, TenantRules rules, Map<TenantProblem, Integer> problems) {
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
    byTenant.forEach(
        (tenant, b) -> {
          if (rules.metadata() == TenantRules.MetadataPolicy.BROADCAST) {
            b.addAllMetadata(request.getMetadataList());
          }
          result.put(tenant, b.build());
        });
    return result;
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
