package io.prwrelay.testing;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.UnknownFieldSet;
import io.prwrelay.oracle.v2.BucketSpan;
import io.prwrelay.oracle.v2.Exemplar;
import io.prwrelay.oracle.v2.Histogram;
import io.prwrelay.oracle.v2.Metadata;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.Sample;
import io.prwrelay.oracle.v2.TimeSeries;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Random PRW 2.0 requests built with the generated oracle classes, deterministic for a seed: series
 * with 0-40 labels (UTF-8 and empty values), tenant labels present, absent, empty or invalid in any
 * sort position, symbols shared across tenants, samples or native histograms (integer, float and
 * custom buckets), exemplars with labels, metadata (sometimes all empty), {@code created_timestamp}
 * and unknown fields on series, exemplars and metadata.
 *
 * <p>{@link Generated#bytes()} encodes {@link Generated#request()} in the ways a sender may, all of
 * which a protobuf parser reads as the same message: the symbols table in first-use or shuffled
 * order (always "" first), symbols before, after or around the series, label refs packed, unpacked,
 * split over several packed fields or placed after the other fields, and unknown top-level fields.
 */
public final class V2RequestGenerator extends AbstractRequestGenerator {
  public double metadataProbability = 0.7;
  public double createdTimestampProbability = 0.2;
  public double unknownFieldProbability = 0.1;

  /** Probability that the request's bytes use any of the unusual encodings. */
  public double unusualEncoding = 0.5;

  /** A request and its encoding. */
  public record Generated(Request request, byte[] bytes) {}

  public V2RequestGenerator(long seed) {
    super(new Random(seed), new Random(seed ^ 0x5DEECE66DL));
  }

  /** A request with {@code seriesCount} series carrying some of {@code tenantLabels}. */
  public Generated request(int seriesCount, List<String> tenantLabels) {
    List<Series> all = new ArrayList<>(seriesCount);
    for (int i = 0; i < seriesCount; i++) {
      all.add(series(tenantLabels));
    }
    return symbolize(all);
  }

  /**
   * A series before symbolization: labels as name, value, name, value...; exemplar labels likewise;
   * metadata strings.
   */
  public record Series(
      List<String> labels,
      TimeSeries.Builder rest,
      List<List<String>> exemplarLabels,
      String help,
      String unit) {}

  /** One series; its label names are unique. */
  public Series series(List<String> tenantLabels) {
    List<Map.Entry<String, String>> list = labels(tenantLabels);
    List<String> flat = new ArrayList<>();
    for (Map.Entry<String, String> e : list) {
      flat.add(e.getKey());
      flat.add(e.getValue());
    }
    TimeSeries.Builder ts = TimeSeries.newBuilder();
    long t0 = 1_700_000_000_000L + random.nextInt(1_000_000);
    if (random.nextDouble() < histogramProbability) {
      int n = 1 + random.nextInt(2);
      for (int i = 0; i < n; i++) {
        ts.addHistograms(histogram(t0 + i));
      }
      if (random.nextInt(10) == 0) {
        ts.addSamples(Sample.newBuilder().setValue(1).setTimestamp(t0));
      }
    } else {
      int samples = random.nextInt(maxSamples + 1);
      for (int i = 0; i < samples; i++) {
        ts.addSamples(
            Sample.newBuilder().setValue(random.nextGaussian() * 1e3).setTimestamp(t0 + i));
      }
    }
    List<List<String>> exemplarLabels = new ArrayList<>();
    if (random.nextDouble() < exemplarProbability) {
      int n = 1 + random.nextInt(2);
      for (int i = 0; i < n; i++) {
        List<String> el = new ArrayList<>();
        if (random.nextInt(5) != 0) {
          el.add("trace_id");
          el.add(Long.toHexString(random.nextLong()));
        }
        if (random.nextBoolean()) {
          el.add(random.nextBoolean() ? "span_id" : "a_first");
          el.add(random.nextInt(8) == 0 ? "" : Long.toHexString(random.nextLong()));
        }
        exemplarLabels.add(el);
        Exemplar.Builder e =
            Exemplar.newBuilder().setValue(random.nextDouble()).setTimestamp(t0 + i);
        if (random.nextDouble() < unknownFieldProbability) {
          e.setUnknownFields(unknownFields());
        }
        ts.addExemplars(e);
      }
    }
    String help = null;
    String unit = null;
    if (random.nextDouble() < metadataProbability) {
      Metadata.Builder m = Metadata.newBuilder();
      if (random.nextInt(8) == 0) {
        help = "";
        unit = "";
      } else {
        m.setTypeValue(random.nextInt(8));
        help = random.nextInt(4) == 0 ? "" : "Help of " + text(0, 40);
        unit = random.nextBoolean() ? "" : random.nextBoolean() ? "seconds" : "bytes";
      }
      if (random.nextDouble() < unknownFieldProbability) {
        m.setUnknownFields(unknownFields());
      }
      ts.setMetadata(m);
    }
    if (random.nextDouble() < createdTimestampProbability) {
      ts.setCreatedTimestamp(t0 - 60_000);
    }
    if (random.nextDouble() < unknownFieldProbability) {
      ts.setUnknownFields(unknownFields());
    }
    return new Series(flat, ts, exemplarLabels, help, unit);
  }

  private Histogram histogram(long timestamp) {
    Histogram.Builder h = Histogram.newBuilder().setTimestamp(timestamp);
    h.setResetHintValue(random.nextInt(4));
    h.setSum(random.nextDouble() * 100);
    int kind = random.nextInt(3);
    if (kind == 2) {
      // Custom buckets (NHCB): positive buckets only, bounds in custom_values.
      h.setSchema(-53).setCountInt(random.nextInt(1000));
      h.addPositiveSpans(BucketSpan.newBuilder().setOffset(0).setLength(3));
      h.addPositiveDeltas(random.nextInt(10)).addPositiveDeltas(-random.nextInt(5));
      h.addPositiveDeltas(random.nextInt(3));
      h.addCustomValues(0.1).addCustomValues(1).addCustomValues(10);
      return h.build();
    }
    h.setSchema(random.nextInt(13) - 4).setZeroThreshold(1e-128);
    h.addPositiveSpans(BucketSpan.newBuilder().setOffset(random.nextInt(9) - 4).setLength(2));
    h.addNegativeSpans(BucketSpan.newBuilder().setOffset(random.nextInt(5)).setLength(1));
    if (kind == 0) {
      h.setCountInt(random.nextInt(1000)).setZeroCountInt(random.nextInt(10));
      h.addPositiveDeltas(random.nextInt(10)).addPositiveDeltas(-random.nextInt(10));
      h.addNegativeDeltas(random.nextInt(7));
    } else {
      h.setCountFloat(random.nextDouble() * 1000).setZeroCountFloat(random.nextDouble());
      h.addPositiveCounts(random.nextDouble()).addPositiveCounts(random.nextDouble());
      h.addNegativeCounts(random.nextDouble());
    }
    return h.build();
  }

  private UnknownFieldSet unknownFields() {
    UnknownFieldSet.Builder u = UnknownFieldSet.newBuilder();
    u.addField(
        7 + random.nextInt(3),
        UnknownFieldSet.Field.newBuilder().addVarint(random.nextInt(1 << 20)).build());
    if (random.nextBoolean()) {
      u.addField(
          12,
          UnknownFieldSet.Field.newBuilder()
              .addLengthDelimited(ByteString.copyFromUtf8(text(0, 20)))
              .build());
    }
    if (random.nextBoolean()) {
      u.addField(15, UnknownFieldSet.Field.newBuilder().addFixed64(random.nextLong()).build());
    }
    return u.build();
  }

  /**
   * Builds the request from symbolized series and encodes it. Refs are assigned in first-use order
   * and then, half of the time, the table is shuffled (keeping "" first).
   */
  public Generated symbolize(List<Series> series) {
    List<String> symbols = new ArrayList<>();
    Map<String, Integer> refs = new HashMap<>();
    symbols.add("");
    refs.put("", 0);
    List<String> order = new ArrayList<>();
    for (Series s : series) {
      order.addAll(s.labels());
      for (List<String> el : s.exemplarLabels()) {
        order.addAll(el);
      }
      if (s.help() != null) {
        order.add(s.help());
        order.add(s.unit());
      }
    }
    for (String str : order) {
      if (!refs.containsKey(str)) {
        refs.put(str, symbols.size());
        symbols.add(str);
      }
    }
    if (random.nextBoolean() && symbols.size() > 2) {
      List<String> tail = new ArrayList<>(symbols.subList(1, symbols.size()));
      Collections.shuffle(tail, random);
      symbols = new ArrayList<>();
      symbols.add("");
      symbols.addAll(tail);
      refs.clear();
      for (int i = 0; i < symbols.size(); i++) {
        refs.put(symbols.get(i), i);
      }
    }
    Request.Builder req = Request.newBuilder().addAllSymbols(symbols);
    for (Series s : series) {
      TimeSeries.Builder ts = s.rest().clone();
      for (String str : s.labels()) {
        ts.addLabelsRefs(refs.get(str));
      }
      for (int i = 0; i < s.exemplarLabels().size(); i++) {
        Exemplar.Builder e = ts.getExemplarsBuilder(i);
        e.clearLabelsRefs();
        for (String str : s.exemplarLabels().get(i)) {
          e.addLabelsRefs(refs.get(str));
        }
      }
      if (s.help() != null) {
        ts.getMetadataBuilder().setHelpRef(refs.get(s.help())).setUnitRef(refs.get(s.unit()));
      }
      req.addTimeseries(ts);
    }
    Request request = req.build();
    return new Generated(request, encode(request));
  }

  /**
   * Encodes {@code request} canonically or, with {@link #unusualEncoding}, in another valid way.
   */
  public byte[] encode(Request request) {
    if (random.nextDouble() >= unusualEncoding) {
      return request.toByteArray();
    }
    try {
      List<byte[]> symbolFields = new ArrayList<>();
      for (String s : request.getSymbolsList()) {
        symbolFields.add(field(4, ByteString.copyFromUtf8(s).toByteArray()));
      }
      List<byte[]> seriesFields = new ArrayList<>();
      for (TimeSeries ts : request.getTimeseriesList()) {
        seriesFields.add(field(5, encodeSeries(ts)));
      }
      List<byte[]> fields = new ArrayList<>();
      switch (random.nextInt(3)) {
        case 0:
          fields.addAll(seriesFields);
          fields.addAll(symbolFields);
          break;
        case 1:
          {
            int half = symbolFields.size() / 2;
            fields.addAll(symbolFields.subList(0, half));
            fields.addAll(seriesFields);
            fields.addAll(symbolFields.subList(half, symbolFields.size()));
            break;
          }
        default:
          fields.addAll(symbolFields);
          fields.addAll(seriesFields);
      }
      if (random.nextBoolean()) {
        // A top-level field the relay does not know (one of the reserved numbers).
        fields.add(random.nextInt(fields.size() + 1), unknownTopLevel());
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      for (byte[] f : fields) {
        out.writeBytes(f);
      }
      return out.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private byte[] unknownTopLevel() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CodedOutputStream c = CodedOutputStream.newInstance(out);
    if (random.nextBoolean()) {
      c.writeUInt64(1 + random.nextInt(3), random.nextInt(1000));
    } else {
      c.writeString(1, "from a v1 sender");
    }
    c.flush();
    return out.toByteArray();
  }

  /** A series with its refs packed, unpacked, split, or after the other fields. */
  private byte[] encodeSeries(TimeSeries ts) throws IOException {
    byte[] rest = ts.toBuilder().clearLabelsRefs().build().toByteArray();
    List<Integer> refs = ts.getLabelsRefsList();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CodedOutputStream c = CodedOutputStream.newInstance(out);
    int mode = random.nextInt(4);
    boolean after = random.nextInt(3) == 0;
    if (after) {
      c.writeRawBytes(rest);
    }
    switch (mode) {
      case 0:
        for (int r : refs) {
          c.writeUInt32(1, r);
        }
        break;
      case 1:
        {
          int split = refs.isEmpty() ? 0 : random.nextInt(refs.size() + 1);
          writePacked(c, refs.subList(0, split));
          writePacked(c, refs.subList(split, refs.size()));
          break;
        }
      default:
        writePacked(c, refs);
    }
    if (!after) {
      c.writeRawBytes(rest);
    }
    c.flush();
    return out.toByteArray();
  }

  private static void writePacked(CodedOutputStream c, List<Integer> refs) throws IOException {
    if (refs.isEmpty()) {
      return;
    }
    int size = 0;
    for (int r : refs) {
      size += CodedOutputStream.computeUInt32SizeNoTag(r);
    }
    c.writeTag(1, 2);
    c.writeUInt32NoTag(size);
    for (int r : refs) {
      c.writeUInt32NoTag(r);
    }
  }

  private static byte[] field(int number, byte[] body) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CodedOutputStream c = CodedOutputStream.newInstance(out);
    c.writeByteArray(number, body);
    c.flush();
    return out.toByteArray();
  }

  /** Orders strings by their UTF-8 bytes, unsigned: the order of label names in a series. */
  public static final Comparator<String> BYTE_ORDER =
      (a, b) ->
          java.util.Arrays.compareUnsigned(
              a.getBytes(java.nio.charset.StandardCharsets.UTF_8),
              b.getBytes(java.nio.charset.StandardCharsets.UTF_8));
}
