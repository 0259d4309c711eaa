package io.prwrelay.bench;

import com.google.protobuf.InvalidProtocolBufferException;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Exemplar;
import io.prwrelay.oracle.v2.Histogram;
import io.prwrelay.oracle.v2.Metadata;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.Sample;
import io.prwrelay.oracle.v2.TimeSeries;
import io.prwrelay.testing.V2Oracle;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * The PRW 2.0 baselines: what a generic relay does with protobuf-java generated classes. Full
 * parse, then per tenant either a rebuilt PRW 2.0 request with its own symbols table ({@link
 * #split}) or a PRW 1.0 request with resolved, sorted labels ({@link #toV1}), then serialize. Same
 * tenant rule as the relay for a single label: the label's value, or the default tenant when
 * absent.
 */
final class GenericRelayV2 {
  private GenericRelayV2() {}

  private static Map<String, List<TimeSeries>> byTenant(Request req, String tenantLabel) {
    List<String> symbols = req.getSymbolsList();
    Map<String, List<TimeSeries>> byTenant = new LinkedHashMap<>();
    for (TimeSeries ts : req.getTimeseriesList()) {
      String tenant = "anonymous";
      List<Integer> refs = ts.getLabelsRefsList();
      for (int i = 0; i + 1 < refs.size(); i += 2) {
        String value = symbols.get(refs.get(i + 1));
        if (symbols.get(refs.get(i)).equals(tenantLabel) && !value.isEmpty()) {
          tenant = value;
          break;
        }
      }
      byTenant.computeIfAbsent(tenant, t -> new ArrayList<>()).add(ts);
    }
    return byTenant;
  }

  /** One tenant's series encoded as a whole request. */
  private interface TenantEncoder {
    byte[] encode(List<String> symbols, List<TimeSeries> series);
  }

  /** Parses {@code request}, splits its series by tenant and hands each tenant's encoding out. */
  private static int perTenant(
      byte[] request, String tenantLabel, BiConsumer<String, byte[]> out, TenantEncoder encoder)
      throws InvalidProtocolBufferException {
    Request req = Request.parseFrom(request);
    Map<String, List<TimeSeries>> byTenant = byTenant(req, tenantLabel);
    for (Map.Entry<String, List<TimeSeries>> e : byTenant.entrySet()) {
      out.accept(e.getKey(), encoder.encode(req.getSymbolsList(), e.getValue()));
    }
    return byTenant.size();
  }

  static int split(byte[] request, String tenantLabel, BiConsumer<String, byte[]> out)
      throws InvalidProtocolBufferException {
    return perTenant(request, tenantLabel, out, GenericRelayV2::splitOne);
  }

  private static byte[] splitOne(List<String> symbols, List<TimeSeries> series) {
    Request.Builder b = Request.newBuilder();
    SymbolsBuilder table = new SymbolsBuilder(b);
    table.ref(symbols.get(0));
    for (TimeSeries ts : series) {
      TimeSeries.Builder t = ts.toBuilder().clearLabelsRefs();
      for (int r : ts.getLabelsRefsList()) {
        t.addLabelsRefs(table.ref(symbols.get(r)));
      }
      for (int i = 0; i < t.getExemplarsCount(); i++) {
        Exemplar.Builder x = t.getExemplarsBuilder(i);
        List<Integer> old = new ArrayList<>(x.getLabelsRefsList());
        x.clearLabelsRefs();
        for (int r : old) {
          x.addLabelsRefs(table.ref(symbols.get(r)));
        }
      }
      if (ts.hasMetadata()) {
        Metadata m = ts.getMetadata();
        t.setMetadata(
            m.toBuilder()
                .setHelpRef(table.ref(symbols.get(m.getHelpRef())))
                .setUnitRef(table.ref(symbols.get(m.getUnitRef()))));
      }
      b.addTimeseries(t);
    }
    return b.build().toByteArray();
  }

  private static final Comparator<Label> BY_NAME = Comparator.comparing(Label::getName);

  static int toV1(byte[] request, String tenantLabel, BiConsumer<String, byte[]> out)
      throws InvalidProtocolBufferException {
    return perTenant(request, tenantLabel, out, GenericRelayV2::toV1One);
  }

  private static byte[] toV1One(List<String> symbols, List<TimeSeries> series) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    Set<MetricMetadata> metadata = new LinkedHashSet<>();
    for (TimeSeries ts : series) {
      io.prwrelay.oracle.v1.TimeSeries.Builder t = io.prwrelay.oracle.v1.TimeSeries.newBuilder();
      List<Label> labels = labels(ts.getLabelsRefsList(), symbols);
      t.addAllLabels(labels);
      for (Sample s : ts.getSamplesList()) {
        t.addSamples(
            io.prwrelay.oracle.v1.Sample.newBuilder()
                .setValue(s.getValue())
                .setTimestamp(s.getTimestamp()));
      }
      for (Exemplar x : ts.getExemplarsList()) {
        t.addExemplars(
            io.prwrelay.oracle.v1.Exemplar.newBuilder()
                .addAllLabels(labels(x.getLabelsRefsList(), symbols))
                .setValue(x.getValue())
                .setTimestamp(x.getTimestamp()));
      }
      for (Histogram h : ts.getHistogramsList()) {
        t.addHistograms(V2Oracle.histogram(h));
      }
      b.addTimeseries(t);
      Metadata m = ts.getMetadata();
      if (m.getTypeValue() != 0 || m.getHelpRef() != 0 || m.getUnitRef() != 0) {
        String family = "";
        for (Label l : labels) {
          if (l.getName().equals("__name__")) {
            family = l.getValue();
          }
        }
        metadata.add(
            MetricMetadata.newBuilder()
                .setTypeValue(m.getTypeValue())
                .setMetricFamilyName(family)
                .setHelp(symbols.get(m.getHelpRef()))
                .setUnit(symbols.get(m.getUnitRef()))
                .build());
      }
    }
    b.addAllMetadata(metadata);
    return b.build().toByteArray();
  }

  private static List<Label> labels(List<Integer> refs, List<String> symbols) {
    List<Label> labels = new ArrayList<>(refs.size() / 2);
    for (int i = 0; i + 1 < refs.size(); i += 2) {
      labels.add(
          Label.newBuilder()
              .setName(symbols.get(refs.get(i)))
              .setValue(symbols.get(refs.get(i + 1)))
              .build());
    }
    labels.sort(BY_NAME);
    return labels;
  }
}
