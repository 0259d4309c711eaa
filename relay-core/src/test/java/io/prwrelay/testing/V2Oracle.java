package io.prwrelay.testing;

import com.google.protobuf.UnknownFieldSet;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.core.route.TenantProblem;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.oracle.v1.BucketSpan;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Exemplar;
import io.prwrelay.oracle.v2.Histogram;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.Sample;
import io.prwrelay.oracle.v2.TimeSeries;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reference answers for PRW 2.0, computed the slow, obvious way on oracle objects: series with
 * their strings resolved from the symbols table, which tenant each belongs to, and the PRW 1.0
 * request a tenant's series convert to. Independent of the relay's byte-level code.
 */
public final class V2Oracle {
  private V2Oracle() {}

  /** An exemplar with its labels resolved (name, value, name, value...). */
  public record ResolvedExemplar(
      List<String> labels, double value, long timestamp, UnknownFieldSet unknown) {}

  /** Metadata with its strings resolved. */
  public record ResolvedMetadata(int type, String help, String unit, UnknownFieldSet unknown) {}

  /**
   * A series with every ref resolved: what must survive routing unchanged (labels in order, minus a
   * removed tenant label).
   */
  public record ResolvedSeries(
      List<String> labels,
      List<Sample> samples,
      List<Histogram> histograms,
      List<ResolvedExemplar> exemplars,
      ResolvedMetadata metadata,
      long createdTimestamp,
      UnknownFieldSet unknown) {}

  /** Resolves every ref of {@code ts} against {@code symbols}. */
  public static ResolvedSeries resolve(TimeSeries ts, List<String> symbols) {
    List<ResolvedExemplar> exemplars = new ArrayList<>();
    for (Exemplar e : ts.getExemplarsList()) {
      exemplars.add(
          new ResolvedExemplar(
              strings(e.getLabelsRefsList(), symbols),
              e.getValue(),
              e.getTimestamp(),
              e.getUnknownFields()));
    }
    ResolvedMetadata metadata =
        ts.hasMetadata()
            ? new ResolvedMetadata(
                ts.getMetadata().getTypeValue(),
                symbols.get(ts.getMetadata().getHelpRef()),
                symbols.get(ts.getMetadata().getUnitRef()),
                ts.getMetadata().getUnknownFields())
            : null;
    return new ResolvedSeries(
        strings(ts.getLabelsRefsList(), symbols),
        ts.getSamplesList(),
        ts.getHistogramsList(),
        exemplars,
        metadata,
        ts.getCreatedTimestamp(),
        ts.getUnknownFields());
  }

  private static List<String> strings(List<Integer> refs, List<String> symbols) {
    List<String> out = new ArrayList<>(refs.size());
    for (int r : refs) {
      out.add(symbols.get(r));
    }
    return out;
  }

  /**
   * Which tenant a series belongs to: the first label of {@code tenantLabels} present with a
   * non-empty value; its value, prefixed, must be a valid Cortex tenant ID. The label index is the
   * pair that resolved it.
   */
  public static Oracle.Resolution tenant(
      ResolvedSeries s, List<String> tenantLabels, String prefix) {
    List<String> l = s.labels();
    for (String name : tenantLabels) {
      for (int i = 0; i + 1 < l.size(); i += 2) {
        if (l.get(i).equals(name) && !l.get(i + 1).isEmpty()) {
          String id = prefix + l.get(i + 1);
          String problem = Oracle.problem(id);
          return problem == null
              ? new Oracle.Resolution(id, i / 2, null)
              : new Oracle.Resolution(null, -1, problem);
        }
      }
    }
    return new Oracle.Resolution(null, -1, "missing");
  }

  /**
   * Index of the first series of {@code request} without a valid tenant under {@code tenantLabels}
   * (no prefix), or -1: where a request is rejected under the reject policy.
   */
  public static int firstSeriesWithoutTenant(Request request, List<String> tenantLabels) {
    for (int i = 0; i < request.getTimeseriesCount(); i++) {
      ResolvedSeries s = resolve(request.getTimeseries(i), request.getSymbolsList());
      if (tenant(s, tenantLabels, "").tenant() == null) {
        return i;
      }
    }
    return -1;
  }

  /** What {@code series} carry, counted on the resolved series. */
  public static SeriesCounts counts(List<ResolvedSeries> series) {
    long samples = 0;
    long exemplars = 0;
    long histograms = 0;
    for (ResolvedSeries s : series) {
      samples += s.samples().size();
      exemplars += s.exemplars().size();
      histograms += s.histograms().size();
    }
    return new SeriesCounts(series.size(), samples, exemplars, histograms);
  }

  /**
   * The series each tenant must receive under {@code rules}, resolved, in order of each tenant's
   * first series; counts series without a valid tenant into {@code problems}.
   */
  public static Map<String, List<ResolvedSeries>> expectedSeries(
      Request request, TenantRules rules, Map<TenantProblem, Integer> problems) {
    Map<String, List<ResolvedSeries>> byTenant = new LinkedHashMap<>();
    for (TimeSeries ts : request.getTimeseriesList()) {
      ResolvedSeries s = resolve(ts, request.getSymbolsList());
      Oracle.Resolution r = tenant(s, rules.labels(), rules.prefix());
      String tenant = Oracle.destination(r, rules, problems);
      if (tenant == null) {
        continue;
      }
      if (r.tenant() != null && rules.removeLabel()) {
        List<String> labels = new ArrayList<>(s.labels());
        labels.remove(2 * r.labelIndex());
        labels.remove(2 * r.labelIndex());
        s =
            new ResolvedSeries(
                labels,
                s.samples(),
                s.histograms(),
                s.exemplars(),
                s.metadata(),
                s.createdTimestamp(),
                s.unknown());
      }
      byTenant.computeIfAbsent(tenant, k -> new ArrayList<>()).add(s);
    }
    return byTenant;
  }

  /** Every symbol a request's series reference, "" included, in no particular order. */
  public static Set<String> referencedSymbols(Request request) {
    List<String> symbols = request.getSymbolsList();
    Set<String> used = new LinkedHashSet<>();
    used.add("");
    for (TimeSeries ts : request.getTimeseriesList()) {
      for (int r : ts.getLabelsRefsList()) {
        used.add(symbols.get(r));
      }
      for (Exemplar e : ts.getExemplarsList()) {
        for (int r : e.getLabelsRefsList()) {
          used.add(symbols.get(r));
        }
      }
      if (ts.hasMetadata()) {
        used.add(symbols.get(ts.getMetadata().getHelpRef()));
        used.add(symbols.get(ts.getMetadata().getUnitRef()));
      }
    }
    return used;
  }

  /**
   * The PRW 1.0 request that {@code series} (one tenant's, resolved) convert to: labels sorted by
   * name bytes, samples as they are, histograms field by field, exemplars with resolved sorted
   * labels, and one {@code MetricMetadata} per distinct non-empty metadata, named after the series'
   * {@code __name__}.
   */
  public static WriteRequest toV1(List<ResolvedSeries> series) {
    WriteRequest.Builder out = WriteRequest.newBuilder();
    Set<MetricMetadata> metadata = new LinkedHashSet<>();
    for (ResolvedSeries s : series) {
      io.prwrelay.oracle.v1.TimeSeries.Builder ts = io.prwrelay.oracle.v1.TimeSeries.newBuilder();
      List<Label> labels = sortedLabels(s.labels());
      ts.addAllLabels(labels);
      for (Sample sample : s.samples()) {
        ts.addSamples(
            io.prwrelay.oracle.v1.Sample.newBuilder()
                .setValue(sample.getValue())
                .setTimestamp(sample.getTimestamp()));
      }
      for (ResolvedExemplar e : s.exemplars()) {
        ts.addExemplars(
            io.prwrelay.oracle.v1.Exemplar.newBuilder()
                .addAllLabels(sortedLabels(e.labels()))
                .setValue(e.value())
                .setTimestamp(e.timestamp())
                .setUnknownFields(e.unknown()));
      }
      for (Histogram h : s.histograms()) {
        ts.addHistograms(histogram(h));
      }
      out.addTimeseries(ts);
      ResolvedMetadata m = s.metadata();
      if (m != null && (m.type() != 0 || !m.help().isEmpty() || !m.unit().isEmpty())) {
        String family = "";
        for (Label l : labels) {
          if (l.getName().equals("__name__")) {
            family = l.getValue();
            break;
          }
        }
        metadata.add(
            MetricMetadata.newBuilder()
                .setTypeValue(m.type())
                .setMetricFamilyName(family)
                .setHelp(m.help())
                .setUnit(m.unit())
                .build());
      }
    }
    out.addAllMetadata(metadata);
    return out.build();
  }

  private static List<Label> sortedLabels(List<String> flat) {
    List<Label> labels = new ArrayList<>();
    for (int i = 0; i + 1 < flat.size(); i += 2) {
      labels.add(Label.newBuilder().setName(flat.get(i)).setValue(flat.get(i + 1)).build());
    }
    // List.sort is stable: labels with equal names keep their order.
    labels.sort((a, b) -> V2RequestGenerator.BYTE_ORDER.compare(a.getName(), b.getName()));
    return labels;
  }

  /** The v1 histogram with every field of the v2 one, set through the generated setters. */
  public static io.prwrelay.oracle.v1.Histogram histogram(Histogram h) {
    io.prwrelay.oracle.v1.Histogram.Builder b = io.prwrelay.oracle.v1.Histogram.newBuilder();
    if (h.hasCountInt()) {
      b.setCountInt(h.getCountInt());
    } else if (h.hasCountFloat()) {
      b.setCountFloat(h.getCountFloat());
    }
    b.setSum(h.getSum()).setSchema(h.getSchema()).setZeroThreshold(h.getZeroThreshold());
    if (h.hasZeroCountInt()) {
      b.setZeroCountInt(h.getZeroCountInt());
    } else if (h.hasZeroCountFloat()) {
      b.setZeroCountFloat(h.getZeroCountFloat());
    }
    for (io.prwrelay.oracle.v2.BucketSpan s : h.getNegativeSpansList()) {
      b.addNegativeSpans(BucketSpan.newBuilder().setOffset(s.getOffset()).setLength(s.getLength()));
    }
    b.addAllNegativeDeltas(h.getNegativeDeltasList());
    b.addAllNegativeCounts(h.getNegativeCountsList());
    for (io.prwrelay.oracle.v2.BucketSpan s : h.getPositiveSpansList()) {
      b.addPositiveSpans(BucketSpan.newBuilder().setOffset(s.getOffset()).setLength(s.getLength()));
    }
    b.addAllPositiveDeltas(h.getPositiveDeltasList());
    b.addAllPositiveCounts(h.getPositiveCountsList());
    b.setResetHintValue(h.getResetHintValue());
    b.setTimestamp(h.getTimestamp());
    b.addAllCustomValues(h.getCustomValuesList());
    return b.build();
  }

  /** Expected v1 requests per tenant under {@code rules}. */
  public static Map<String, WriteRequest> expectedV1(
      Request request, TenantRules rules, Map<TenantProblem, Integer> problems) {
    Map<String, WriteRequest> out = new LinkedHashMap<>();
    expectedSeries(request, rules, problems).forEach((t, s) -> out.put(t, toV1(s)));
    return out;
  }
}
