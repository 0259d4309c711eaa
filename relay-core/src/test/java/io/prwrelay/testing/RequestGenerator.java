package io.prwrelay.testing;

import io.prwrelay.oracle.v1.BucketSpan;
import io.prwrelay.oracle.v1.Exemplar;
import io.prwrelay.oracle.v1.Histogram;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Random PRW 1.0 requests built with the generated oracle classes: up to thousands of series, 0-40
 * labels, UTF-8 and empty values, samples, exemplars, native histograms, metadata, and tenant
 * labels that are present, absent, empty or invalid, in any sort position. Deterministic for a
 * seed; the labels and the knobs are {@link AbstractRequestGenerator}'s.
 */
public final class RequestGenerator extends AbstractRequestGenerator {
  public int maxMetadata = 3;

  public RequestGenerator(long seed) {
    this(new Random(seed));
  }

  private RequestGenerator(Random random) {
    super(random, random);
  }

  /** A request with {@code seriesCount} series carrying some of {@code tenantLabels}. */
  public WriteRequest request(int seriesCount, List<String> tenantLabels) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int i = 0; i < seriesCount; i++) {
      b.addTimeseries(series(tenantLabels));
    }
    int metadata = maxMetadata == 0 ? 0 : random.nextInt(maxMetadata + 1);
    for (int i = 0; i < metadata; i++) {
      b.addMetadata(
          MetricMetadata.newBuilder()
              .setTypeValue(random.nextInt(8))
              .setMetricFamilyName("metric_" + random.nextInt(100))
              .setHelp(text(0, 40))
              .setUnit(random.nextBoolean() ? "" : "seconds"));
    }
    return b.build();
  }

  /** One series; its label names are unique. */
  public TimeSeries series(List<String> tenantLabels) {
    List<Label> list = new ArrayList<>();
    for (Map.Entry<String, String> e : labels(tenantLabels)) {
      list.add(Label.newBuilder().setName(e.getKey()).setValue(e.getValue()).build());
    }
    TimeSeries.Builder ts = TimeSeries.newBuilder().addAllLabels(list);
    int samples = random.nextInt(maxSamples + 1);
    long t0 = 1_700_000_000_000L + random.nextInt(1_000_000);
    for (int i = 0; i < samples; i++) {
      ts.addSamples(Sample.newBuilder().setValue(random.nextGaussian() * 1e3).setTimestamp(t0 + i));
    }
    if (random.nextDouble() < exemplarProbability) {
      ts.addExemplars(
          Exemplar.newBuilder()
              .addLabels(
                  Label.newBuilder()
                      .setName("trace_id")
                      .setValue(Long.toHexString(random.nextLong())))
              .setValue(random.nextDouble())
              .setTimestamp(t0));
    }
    if (random.nextDouble() < histogramProbability) {
      ts.addHistograms(
          Histogram.newBuilder()
              .setCountInt(random.nextInt(1000))
              .setSum(random.nextDouble() * 100)
              .setSchema(random.nextInt(9) - 4)
              .setZeroThreshold(1e-128)
              .setZeroCountInt(random.nextInt(10))
              .addPositiveSpans(BucketSpan.newBuilder().setOffset(random.nextInt(5)).setLength(2))
              .addPositiveDeltas(random.nextInt(10))
              .addPositiveDeltas(-random.nextInt(10))
              .setTimestamp(t0));
    }
    return ts.build();
  }
}
