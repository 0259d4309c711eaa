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
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Random PRW 1.0 requests built with the generated oracle classes: up to thousands of series, 0-40
 * labels, UTF-8 and empty values, samples, exemplars, native histograms, metadata, and tenant
 * labels that are present, absent, empty or invalid, in any sort position. Deterministic for a
 * seed.
 */
public final class RequestGenerator {
  /** Tenant values that are valid Cortex tenant IDs. */
  public static final List<String> VALID_TENANTS =
      List.of("team-a", "team-b", "svc.c", "T_(1)", "x", "a!b*c'd", "anonymous", "z9");

  /** Tenant values that Cortex would reject (each for a different reason). */
  public static final List<String> INVALID_TENANTS =
      List.of(
          "a|b",
          "a/b",
          "host:9100",
          "line\r\nX-Injected: 1",
          "ünïcode",
          "sp ace",
          "x".repeat(151),
          ".",
          "..",
          "__markers__",
          "user-index.json.gz");

  private final Random random;

  /** Probability that a given tenant label is present in a series. */
  public double tenantLabelPresence = 0.7;

  /** Probability that a present tenant label gets an invalid value. */
  public double invalidTenantValue = 0.05;

  /** Probability that a present tenant label gets an empty value. */
  public double emptyTenantValue = 0.03;

  /**
   * Whether labels are sorted by name, as senders must; unsorted labels test order independence.
   */
  public boolean sortLabels = true;

  public int maxExtraLabels = 40;
  public int maxSamples = 4;
  public double exemplarProbability = 0.2;
  public double histogramProbability = 0.2;
  public int maxMetadata = 3;

  public RequestGenerator(long seed) {
    this.random = new Random(seed);
  }

  public Random random() {
    return random;
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
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("__name__", "metric_" + random.nextInt(50));
    int extra = random.nextInt(maxExtraLabels + 1);
    for (int i = 0; i < extra; i++) {
      String name = labelName();
      if (!tenantLabels.contains(name)) {
        labels.put(name, random.nextInt(10) == 0 ? "" : text(0, 30));
      }
    }
    for (String t : tenantLabels) {
      if (random.nextDouble() < tenantLabelPresence) {
        labels.put(t, tenantValue());
      }
    }
    List<Label> list = new ArrayList<>();
    labels.forEach((k, v) -> list.add(Label.newBuilder().setName(k).setValue(v).build()));
    if (sortLabels) {
      list.sort(Comparator.comparing(Label::getName));
    } else {
      Collections.shuffle(list, random);
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

  private String tenantValue() {
    double r = random.nextDouble();
    if (r < emptyTenantValue) {
      return "";
    }
    if (r < emptyTenantValue + invalidTenantValue) {
      return INVALID_TENANTS.get(random.nextInt(INVALID_TENANTS.size()));
    }
    return VALID_TENANTS.get(random.nextInt(VALID_TENANTS.size()));
  }

  private String labelName() {
    switch (random.nextInt(4)) {
      case 0:
        return "job";
      case 1:
        return "instance";
      default:
        return "l" + random.nextInt(200);
    }
  }

  /** Random UTF-8 text, including multi-byte and supplementary characters. */
  public String text(int min, int max) {
    int n = min + random.nextInt(max - min + 1);
    StringBuilder sb = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      int k = random.nextInt(20);
      if (k < 14) {
        sb.append((char) ('a' + random.nextInt(26)));
      } else if (k < 16) {
        sb.append("-_./:|= ".charAt(random.nextInt(8)));
      } else if (k < 18) {
        sb.append((char) (0xC0 + random.nextInt(0x200)));
      } else if (k < 19) {
        sb.appendCodePoint(0x1F600 + random.nextInt(50));
      } else {
        sb.append((char) ('0' + random.nextInt(10)));
      }
    }
    return sb.toString();
  }
}
