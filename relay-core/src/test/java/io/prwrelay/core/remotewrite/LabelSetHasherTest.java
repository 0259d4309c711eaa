package io.prwrelay.core.remotewrite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link LabelSetHasher} on PRW 1.0 series read by a label-walking reader and by one that stops at
 * the tenant label: the same hash either way, and the metric name wherever {@code __name__} is.
 */
class LabelSetHasherTest {
  private static TimeSeries series(String... pairs) {
    TimeSeries.Builder t = TimeSeries.newBuilder();
    for (int i = 0; i < pairs.length; i += 2) {
      t.addLabels(Label.newBuilder().setName(pairs[i]).setValue(pairs[i + 1]));
    }
    return t.addSamples(Sample.newBuilder().setValue(1).setTimestamp(2)).build();
  }

  /** Hash and name of every series of {@code request}, read with or without walking labels. */
  private static List<String> digests(WriteRequest request, boolean walkLabels) {
    byte[] bytes = request.toByteArray();
    LabelSetHasher hasher = new LabelSetHasher();
    List<String> out = new ArrayList<>();
    WriteRequestReader reader = new WriteRequestReader(List.of("service_id"), false, walkLabels);
    RequestError error =
        reader.read(
            bytes,
            0,
            bytes.length,
            new WriteRequestVisitor() {
              @Override
              public boolean onSeries(SeriesView s) {
                hasher.digest(s);
                hasher.findName(s);
                String name =
                    hasher.nameOffset() < 0
                        ? "-"
                        : new String(
                            s.array(),
                            hasher.nameOffset(),
                            hasher.nameLength(),
                            StandardCharsets.UTF_8);
                out.add(hasher.hash() + " " + name);
                return true;
              }

              @Override
              public void onMetadata(int start, int end) {}
            });
    assertEquals(null, error);
    return out;
  }

  @Test
  void findsTheNameWhereverItIsAndHashesAlikeWithOrWithoutTheReadersWalk() {
    WriteRequest request =
        WriteRequest.newBuilder()
            .addTimeseries(series("__name__", "up", "service_id", "a", "zone", "z1"))
            .addTimeseries(series("Upper", "x", "__name__", "first_not", "service_id", "a"))
            .addTimeseries(series("service_id", "a", "job", "no_name"))
            .addTimeseries(series("__name__", "", "service_id", "a"))
            .addTimeseries(series("__name__", "long", "service_id", "v".repeat(200)))
            .build();
    List<String> walked = digests(request, true);
    assertEquals(walked, digests(request, false));
    assertEquals(
        List.of("up", "first_not", "-", "-", "long"),
        walked.stream().map(d -> d.substring(d.indexOf(' ') + 1)).toList());
    byte[] labels =
        series("__name__", "up", "service_id", "a", "zone", "z1").toBuilder()
            .clearSamples()
            .build()
            .toByteArray();
    assertEquals(LabelSetHasher.hash(labels, 0, labels.length) + " up", walked.get(0));
  }

  @Test
  void hashesOfEveryLengthDiffer() {
    byte[] zeros = new byte[80];
    java.util.Set<Long> seen = new java.util.HashSet<>();
    for (int length = 0; length <= zeros.length; length++) {
      seen.add(LabelSetHasher.hash(zeros, 0, length));
    }
    assertEquals(zeros.length + 1, seen.size());
  }

  /** Digests every series of the PRW 2.0 {@code request} with {@code hasher}, as a router does. */
  private static void digestV2(LabelSetHasher hasher, io.prwrelay.oracle.v2.Request request) {
    byte[] bytes = request.toByteArray();
    V2RequestReader reader = new V2RequestReader(List.of("service_id"));
    hasher.startRequest(reader.symbols());
    assertEquals(
        null,
        reader.read(
            bytes,
            0,
            bytes.length,
            s -> {
              hasher.digest(s);
              return true;
            }));
  }

  /** A PRW 2.0 request of one series per symbol pair, {@code series} series of tenant "t". */
  private static io.prwrelay.oracle.v2.Request v2(int series) {
    io.prwrelay.oracle.v2.Request.Builder r =
        io.prwrelay.oracle.v2.Request.newBuilder()
            .addSymbols("")
            .addSymbols("i")
            .addSymbols("service_id")
            .addSymbols("t");
    for (int i = 0; i < series; i++) {
      r.addSymbols(Integer.toString(i));
      r.addTimeseries(
          io.prwrelay.oracle.v2.TimeSeries.newBuilder()
              .addLabelsRefs(1)
              .addLabelsRefs(4 + i)
              .addLabelsRefs(2)
              .addLabelsRefs(3)
              .addSamples(io.prwrelay.oracle.v2.Sample.newBuilder().setValue(1).setTimestamp(1)));
    }
    return r.build();
  }

  @Test
  void theSymbolScratchOfALargeRequestIsGivenBackAtTheNext() {
    LabelSetHasher hasher = new LabelSetHasher();
    digestV2(hasher, v2(LabelSetHasher.RETAINED_SYMBOLS));
    assertTrue(hasher.symbolCapacity() > LabelSetHasher.RETAINED_SYMBOLS);
    digestV2(hasher, v2(10));
    assertEquals(256, hasher.symbolCapacity());
    // Up to the bound it is kept.
    digestV2(hasher, v2(LabelSetHasher.RETAINED_SYMBOLS - 4));
    digestV2(hasher, v2(10));
    assertEquals(LabelSetHasher.RETAINED_SYMBOLS, hasher.symbolCapacity());
  }
}
