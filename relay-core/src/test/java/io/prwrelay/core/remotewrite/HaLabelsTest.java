package io.prwrelay.core.remotewrite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The key a PRW 1.0 request is judged by: its first series' cluster and replica values. */
class HaLabelsTest {
  private final HaLabels ha = HaLabels.defaults();

  private static TimeSeries series(String... namesAndValues) {
    TimeSeries.Builder b = TimeSeries.newBuilder();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      b.addLabels(Label.newBuilder().setName(namesAndValues[i]).setValue(namesAndValues[i + 1]));
    }
    return b.addSamples(Sample.newBuilder().setValue(1).setTimestamp(1000)).build();
  }

  private long key(WriteRequest request) {
    ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer();
    try {
      direct.writeBytes(request.toByteArray());
      long k = ha.keyOf(direct);
      assertEquals(k, ha.keyOf(Unpooled.wrappedBuffer(request.toByteArray())), "heap and direct");
      return k;
    } finally {
      direct.release();
    }
  }

  private long key(TimeSeries... series) {
    return key(WriteRequest.newBuilder().addAllTimeseries(List.of(series)).build());
  }

  @Test
  void theFirstSeriesDecidesAndTheRestIsNotRead() {
    TimeSeries r1 = series("__name__", "up", "__replica__", "r1", "cluster", "prod", "job", "x");
    TimeSeries r2 = series("__name__", "up", "__replica__", "r2", "cluster", "prod", "job", "x");
    assertEquals(key(r1), key(r1, r2));
    assertEquals(key(r2), key(r2, r1));
    assertNotEquals(key(r1), key(r2));
    assertFalse(HaLabels.judgedAlike(key(r1, r2), key(r2, r1)));
    assertTrue(HaLabels.judgedAlike(key(r1), key(r1, r2)));
  }

  @Test
  void otherLabelsAndSamplesDoNotChangeTheKey() {
    TimeSeries a = series("__name__", "up", "__replica__", "r1", "cluster", "prod");
    TimeSeries b =
        series("__name__", "node_load1", "__replica__", "r1", "cluster", "prod", "z", "");
    assertEquals(key(a), key(b));
    assertNotEquals(HaLabels.NONE, key(a));
  }

  @Test
  void aSeriesWithoutBothLabelsIsNotCheckedAndHasTheKeyOfNone() {
    // Cortex and Mimir accept a push whole unless its first series carries both labels.
    long none = key(series("__name__", "up", "job", "x"));
    assertEquals(HaLabels.NONE, none);
    assertEquals(HaLabels.NONE, key(WriteRequest.getDefaultInstance()), "no series");
    assertEquals(HaLabels.NONE, key(series("__name__", "up", "cluster", "", "__replica__", "")));
    assertEquals(HaLabels.NONE, key(series("cluster", "prod")), "cluster without a replica");
    assertEquals(HaLabels.NONE, key(series("cluster", "eu-1")), "any cluster without a replica");
    assertEquals(HaLabels.NONE, key(series("__replica__", "r1")), "a replica without a cluster");
    assertEquals(HaLabels.NONE, key(series("cluster", "prod", "__replica__", "")));
    long both = key(series("__replica__", "r1", "cluster", "prod"));
    assertNotEquals(HaLabels.NONE, both);
    assertFalse(HaLabels.judgedAlike(none, both), "an unchecked push never leads a replica's");
    assertNotEquals(
        key(series("cluster", "ab", "__replica__", "c")),
        key(series("cluster", "a", "__replica__", "bc")));
  }

  @Test
  void metadataBeforeTheFirstSeriesIsSkipped() {
    TimeSeries r1 = series("__replica__", "r1", "cluster", "prod");
    byte[] meta =
        WriteRequest.newBuilder()
            .addMetadata(MetricMetadata.newBuilder().setMetricFamilyName("up").setHelp("h"))
            .build()
            .toByteArray();
    byte[] rest = WriteRequest.newBuilder().addTimeseries(r1).build().toByteArray();
    byte[] both = new byte[meta.length + rest.length];
    System.arraycopy(meta, 0, both, 0, meta.length);
    System.arraycopy(rest, 0, both, meta.length, rest.length);
    assertEquals(key(r1), ha.keyOf(Unpooled.wrappedBuffer(both)));
  }

  @Test
  void configuredNamesAreRead() {
    HaLabels other = new HaLabels("dc", "replica");
    TimeSeries s = series("dc", "eu", "replica", "1", "cluster", "prod", "__replica__", "r1");
    TimeSeries t = series("dc", "eu", "replica", "2", "cluster", "prod", "__replica__", "r1");
    byte[] a = WriteRequest.newBuilder().addTimeseries(s).build().toByteArray();
    byte[] b = WriteRequest.newBuilder().addTimeseries(t).build().toByteArray();
    assertNotEquals(other.keyOf(Unpooled.wrappedBuffer(a)), other.keyOf(Unpooled.wrappedBuffer(b)));
    assertEquals(ha.keyOf(Unpooled.wrappedBuffer(a)), ha.keyOf(Unpooled.wrappedBuffer(b)));
    assertTrue(other.isHaLabel("dc") && other.isHaLabel("replica") && !other.isHaLabel("cluster"));
    assertThrows(IllegalArgumentException.class, () -> new HaLabels("x", "x"));
  }

  @Test
  void aPrefixIsIncompleteUntilItHoldsTheFirstSeries() {
    TimeSeries r1 = series("__name__", "up", "__replica__", "r1", "cluster", "prod");
    byte[] whole =
        WriteRequest.newBuilder().addTimeseries(r1).addTimeseries(r1).build().toByteArray();
    int firstEnd = WriteRequest.newBuilder().addTimeseries(r1).build().getSerializedSize();
    for (int n = 0; n <= whole.length; n++) {
      long k = ha.keyOfPrefix(Unpooled.wrappedBuffer(whole, 0, n));
      if (n < firstEnd) {
        assertEquals(HaLabels.UNKNOWN, k, "prefix of " + n);
      } else {
        assertEquals(key(r1), k, "prefix of " + n);
      }
    }
    assertFalse(HaLabels.judgedAlike(HaLabels.UNKNOWN, HaLabels.UNKNOWN));
  }

  @Test
  void anyBytesGiveAKeyWithoutThrowing() {
    Random r = new Random(7);
    TimeSeries r1 = series("__name__", "up", "__replica__", "r1", "cluster", "prod");
    byte[] good = WriteRequest.newBuilder().addTimeseries(r1).build().toByteArray();
    List<Long> keys = new ArrayList<>();
    for (int i = 0; i < 20_000; i++) {
      byte[] b = good.clone();
      for (int k = 0; k < 1 + r.nextInt(3); k++) {
        b[r.nextInt(b.length)] = (byte) r.nextInt(256);
      }
      keys.add(ha.keyOf(Unpooled.wrappedBuffer(b)));
      keys.add(ha.keyOfPrefix(Unpooled.wrappedBuffer(b, 0, r.nextInt(b.length + 1))));
    }
    assertEquals(40_000, keys.size());
  }
}
