package io.prwrelay.core.encode;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.V2RawProto.refs;
import static io.prwrelay.testing.V2RawProto.sample;
import static io.prwrelay.testing.V2RawProto.series;
import static io.prwrelay.testing.V2RawProto.symbols;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.testing.ForEachSeed;
import io.prwrelay.testing.NoAllocationAllocator;
import io.prwrelay.testing.Oracle;
import io.prwrelay.testing.RequestBuffers;
import io.prwrelay.testing.V2Oracle;
import io.prwrelay.testing.V2RequestGenerator;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A whole PRW 2.0 request converts to the PRW 1.0 request the oracle builds from the generated
 * classes, byte for byte: labels resolved and sorted, samples, histograms field by field,
 * exemplars, metadata.
 */
class V2ToV1ConverterTest {
  static Stream<Long> seeds() {
    return RequestBuffers.seeds(100);
  }

  private static V2ToV1Converter.Conversion convert(V2ToV1Converter converter, byte[] request) {
    return RequestBuffers.readHeap(request, in -> converter.convert(in, RequestBuffers.ALLOC));
  }

  @ForEachSeed
  void convertsLikeTheOracle(long seed) throws Exception {
    V2RequestGenerator gen = new V2RequestGenerator(seed);
    gen.sortLabels = seed % 3 != 0;
    V2ToV1Converter converter = new V2ToV1Converter();
    for (int round = 0; round < 2; round++) {
      V2RequestGenerator.Generated g = gen.request(gen.random().nextInt(150), List.of("x"));
      Request request = g.request();
      List<V2Oracle.ResolvedSeries> all = new ArrayList<>();
      for (io.prwrelay.oracle.v2.TimeSeries ts : request.getTimeseriesList()) {
        all.add(V2Oracle.resolve(ts, request.getSymbolsList()));
      }
      WriteRequest want = V2Oracle.toV1(all);
      V2ToV1Converter.Conversion c = convert(converter, g.bytes());
      try {
        assertNull(c.error());
        byte[] got = ByteBufUtil.getBytes(c.content());
        assertArrayEquals(want.toByteArray(), got);
        assertEquals(want, WriteRequest.parseFrom(got));
        assertEquals(Oracle.counts(want), c.counts());
        assertEquals(want.getMetadataCount(), c.metadata());
      } finally {
        c.content().release();
      }
    }
  }

  @Test
  void anEmptyRequestConvertsToAnEmptyWriteRequest() {
    V2ToV1Converter.Conversion c = convert(new V2ToV1Converter(), new byte[0]);
    assertNull(c.error());
    assertEquals(0, c.content().readableBytes());
    assertEquals(SeriesCounts.NONE, c.counts());
    c.content().release();
  }

  @Test
  void aMalformedRequestIsAnErrorAndAllocatesNothing() {
    V2ToV1Converter converter = new V2ToV1Converter();
    byte[] request = cat(symbols("", "a"), series(refs(1, 2), sample(1, 1)));
    ByteBuf in = Unpooled.wrappedBuffer(request);
    V2ToV1Converter.Conversion c = converter.convert(in, new NoAllocationAllocator());
    in.release();
    RequestError error = c.error();
    assertNotNull(error);
    assertEquals("timeseries[0].labels_refs[1]", error.field());
    assertNull(c.content());
    // Still usable.
    V2ToV1Converter.Conversion ok =
        convert(converter, cat(symbols("", "a", "b"), series(refs(1, 2), sample(1, 1))));
    assertNull(ok.error());
    assertEquals(1, ok.counts().series());
    ok.content().release();
  }
}
