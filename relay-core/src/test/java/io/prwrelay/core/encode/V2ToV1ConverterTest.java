package io.prwrelay.core.encode;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RequestBuffers.MAX_OUTPUT;
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
import io.prwrelay.testing.V2RawProto;
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
    return RequestBuffers.readHeap(
        request, in -> converter.convert(in, RequestBuffers.ALLOC, MAX_OUTPUT));
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
    V2ToV1Converter.Conversion c = converter.convert(in, new NoAllocationAllocator(), MAX_OUTPUT);
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

  @Test
  void aConversionOverTheBoundIsAnErrorNamingItsSizeAndAllocatesNothing() throws Exception {
    // One 64 KiB symbol referenced by 100 series: 6.5 MB of PRW 1.0 from 67 KB.
    byte[] request = V2RawProto.symbolInEverySeries("x".repeat(64 << 10), 100, 1);
    int converted = V2Oracle.toV1(resolvedSeries(request)).getSerializedSize();
    V2ToV1Converter converter = new V2ToV1Converter();
    ByteBuf in = Unpooled.wrappedBuffer(request);
    V2ToV1Converter.Conversion c = converter.convert(in, new NoAllocationAllocator(), 1 << 20);
    in.release();
    assertNull(c.content());
    assertEquals(RequestError.Kind.TOO_LARGE, c.error().kind());
    assertEquals(
        "converting this PRW 2.0 request to PRW 1.0 would take "
            + converted
            + " bytes, more than relay.server.max-decompressed-bytes=1048576 (PRW 1.0 repeats a"
            + " string in every series that references it)",
        c.error().message());

    V2ToV1Converter.Conversion atTheBound =
        RequestBuffers.readHeap(
            request, b -> converter.convert(b, RequestBuffers.ALLOC, converted));
    try {
      assertNull(atTheBound.error());
      assertArrayEquals(
          V2Oracle.toV1(resolvedSeries(request)).toByteArray(),
          ByteBufUtil.getBytes(atTheBound.content()));
    } finally {
      atTheBound.content().release();
    }
  }

  private static List<V2Oracle.ResolvedSeries> resolvedSeries(byte[] request) throws Exception {
    Request r = Request.parseFrom(request);
    List<V2Oracle.ResolvedSeries> all = new ArrayList<>();
    for (io.prwrelay.oracle.v2.TimeSeries ts : r.getTimeseriesList()) {
      all.add(V2Oracle.resolve(ts, r.getSymbolsList()));
    }
    return all;
  }
}
