package io.prwrelay.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.testing.RequestGenerator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

/** The testkit's encoder writes exactly the bytes protobuf-java writes for the same request. */
class WriteRequestEncoderTest {
  private static void encode(WriteRequestEncoder encoder, WriteRequest request) {
    for (TimeSeries ts : request.getTimeseriesList()) {
      encoder.beginSeries();
      for (Label l : ts.getLabelsList()) {
        encoder.label(l.getName(), l.getValue());
      }
      for (Sample s : ts.getSamplesList()) {
        encoder.sample(s.getValue(), s.getTimestamp());
      }
      encoder.endSeries();
    }
  }

  private static TimeSeries series(String name, String value, double sample, long timestamp) {
    return TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName(name).setValue(value))
        .addSamples(Sample.newBuilder().setValue(sample).setTimestamp(timestamp))
        .build();
  }

  @Test
  void randomRequestsAreByteForByteWhatTheOracleWrites() {
    RequestGenerator gen = new RequestGenerator(11);
    gen.exemplarProbability = 0;
    gen.histogramProbability = 0;
    gen.maxMetadata = 0;
    WriteRequestEncoder encoder = new WriteRequestEncoder(16);
    for (int i = 0; i < 200; i++) {
      WriteRequest request = gen.request(gen.random().nextInt(20), List.of("service_id"));
      encoder.reset();
      encode(encoder, request);
      assertArrayEquals(request.toByteArray(), encoder.toByteArray(), request::toString);
      assertEquals(request.getSerializedSize(), encoder.size());
      assertEquals(request.getTimeseriesCount(), encoder.seriesCount());
    }
  }

  @Test
  void emptyStringsZeroValuesAndOddTextAreWrittenAsProtobufDoes() {
    WriteRequest request =
        WriteRequest.newBuilder()
            .addTimeseries(series("", "", 0.0, 0))
            .addTimeseries(series("job", "", -0.0, -1))
            .addTimeseries(series("unpaired", "a\uD800b\uDC00", Double.NaN, Long.MAX_VALUE))
            .addTimeseries(series("emoji", "\uD83D\uDE00 ünïcode ✓", 1e300, Long.MIN_VALUE))
            .addTimeseries(TimeSeries.newBuilder())
            .build();
    WriteRequestEncoder encoder = new WriteRequestEncoder();
    encode(encoder, request);
    assertArrayEquals(request.toByteArray(), encoder.toByteArray());
  }

  @Test
  void singleFieldsAssembleIntoTheSameSeries() throws Exception {
    byte[] byHand =
        WriteRequestEncoder.seriesField(
            WriteRequestEncoder.labelField("__name__", "up"),
            WriteRequestEncoder.labelField("job", "node"),
            WriteRequestEncoder.sampleField(1.5, 1_700_000_000_000L));
    byte[] streamed =
        new WriteRequestEncoder()
            .beginSeries()
            .label("__name__", "up")
            .label("job", "node")
            .sample(1.5, 1_700_000_000_000L)
            .endSeries()
            .toByteArray();
    assertArrayEquals(streamed, byHand);
    TimeSeries ts = WriteRequest.parseFrom(byHand).getTimeseries(0);
    assertEquals("node", ts.getLabels(1).getValue());
    assertEquals(1_700_000_000_000L, ts.getSamples(0).getTimestamp());
  }

  @Test
  void snappyBodiesDecompressToTheRequestAndResetStartsANewOne() throws Exception {
    WriteRequestEncoder encoder = new WriteRequestEncoder(8);
    for (int i = 0; i < 500; i++) {
      encoder.beginSeries().label("__name__", "m").label("i", "v" + i).sample(i, i).endSeries();
    }
    byte[] raw = encoder.toByteArray();
    assertArrayEquals(raw, Snappy.uncompress(encoder.snappy()));
    ByteBuf direct = encoder.snappy(PooledByteBufAllocator.DEFAULT);
    try {
      assertTrue(direct.isDirect());
      assertArrayEquals(raw, Snappy.uncompress(ByteBufUtil.getBytes(direct)));
    } finally {
      direct.release();
    }
    encoder.reset().beginSeries().label("a", "b").endSeries();
    assertEquals(1, encoder.seriesCount());
    assertArrayEquals(
        WriteRequestEncoder.seriesField(WriteRequestEncoder.labelField("a", "b")),
        encoder.toByteArray());
  }

  @Test
  void aSeriesMustBeBegunAndEndedInOrder() {
    WriteRequestEncoder encoder = new WriteRequestEncoder();
    assertThrows(IllegalStateException.class, () -> encoder.label("a", "b"));
    encoder.beginSeries();
    assertThrows(IllegalStateException.class, encoder::beginSeries);
    assertThrows(IllegalStateException.class, encoder::snappy);
  }
}
