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
import java.util.HashMap;
import java.util.Map;

/**
 * PRW 2.0 benchmark inputs: a {@link Payloads} request (PRW 1.0) re-encoded as the {@code
 * io.prometheus.write.v2.Request} a Prometheus 3 sender would send for the same series, so the v1
 * and v2 rows of one run measure the same data. Symbols are numbered in order of first use, as
 * Prometheus does, and every series carries metadata (type from the request's metadata for its
 * family, else guessed from the name; a help text per family), as Prometheus 3 sends it.
 */
final class V2Payloads {
  private V2Payloads() {}

  /** The PRW 2.0 encoding of the PRW 1.0 request {@code v1}. */
  static byte[] fromV1(byte[] v1) {
    WriteRequest in;
    try {
      in = WriteRequest.parseFrom(v1);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException("not a PRW 1.0 request", e);
    }
    Map<String, MetricMetadata> families = new HashMap<>();
    for (MetricMetadata m : in.getMetadataList()) {
      families.putIfAbsent(m.getMetricFamilyName(), m);
    }
    Request.Builder out = Request.newBuilder();
    SymbolsBuilder refs = new SymbolsBuilder(out);
    refs.ref("");
    for (io.prwrelay.oracle.v1.TimeSeries ts : in.getTimeseriesList()) {
      TimeSeries.Builder s = TimeSeries.newBuilder();
      String name = "";
      for (Label l : ts.getLabelsList()) {
        s.addLabelsRefs(refs.ref(l.getName()));
        s.addLabelsRefs(refs.ref(l.getValue()));
        if (l.getName().equals("__name__")) {
          name = l.getValue();
        }
      }
      for (io.prwrelay.oracle.v1.Sample sample : ts.getSamplesList()) {
        s.addSamples(
            Sample.newBuilder().setValue(sample.getValue()).setTimestamp(sample.getTimestamp()));
      }
      for (io.prwrelay.oracle.v1.Histogram h : ts.getHistogramsList()) {
        try {
          // The two histogram messages share their layout.
          s.addHistograms(Histogram.parseFrom(h.toByteString()));
        } catch (InvalidProtocolBufferException e) {
          throw new IllegalStateException(e);
        }
      }
      for (io.prwrelay.oracle.v1.Exemplar e : ts.getExemplarsList()) {
        Exemplar.Builder x =
            Exemplar.newBuilder().setValue(e.getValue()).setTimestamp(e.getTimestamp());
        for (Label l : e.getLabelsList()) {
          x.addLabelsRefs(refs.ref(l.getName()));
          x.addLabelsRefs(refs.ref(l.getValue()));
        }
        s.addExemplars(x);
      }
      MetricMetadata known = families.get(name);
      int type = known != null ? known.getTypeValue() : guessType(name);
      String help = known != null ? known.getHelp() : "Help text of " + name + ".";
      String unit = known != null ? known.getUnit() : "";
      s.setMetadata(
          Metadata.newBuilder()
              .setTypeValue(type)
              .setHelpRef(refs.ref(help))
              .setUnitRef(refs.ref(unit)));
      out.addTimeseries(s);
    }
    return out.build().toByteArray();
  }

  private static int guessType(String name) {
    if (name.endsWith("_total")) {
      return Metadata.MetricType.METRIC_TYPE_COUNTER_VALUE;
    }
    if (name.endsWith("_bucket") || name.endsWith("_count") || name.endsWith("_sum")) {
      return Metadata.MetricType.METRIC_TYPE_HISTOGRAM_VALUE;
    }
    return Metadata.MetricType.METRIC_TYPE_GAUGE_VALUE;
  }
}
