package io.prwrelay.core.encode;

import static io.prwrelay.testing.RequestBuffers.MAX_OUTPUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.testing.FuzzInputs;
import io.prwrelay.testing.Oracle;
import io.prwrelay.testing.V2Oracle;
import java.util.ArrayList;
import java.util.List;

/**
 * Fuzzed bytes as a whole PRW 2.0 request through {@link V2ToV1Converter}: a typed error and no
 * content, or a PRW 1.0 request that decodes to the oracle's conversion of every series, with
 * matching counts. Nothing else may be thrown and nothing may leak.
 */
class V2ToV1ConverterFuzzTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private static final V2ToV1Converter CONVERTER = new V2ToV1Converter();

  @FuzzTest(maxDuration = "4m")
  void convertsExactlyOrAnswersATypedError(byte[] data) throws Exception {
    ByteBuf in = FuzzInputs.wrap(data, ALLOC);
    V2ToV1Converter.Conversion c;
    try {
      c = CONVERTER.convert(in, ALLOC, MAX_OUTPUT);
    } finally {
      in.release();
    }
    if (c.error() != null) {
      assertNull(c.content(), "no content beside an error");
      return;
    }
    try {
      Request request = FuzzInputs.parseV2(data);
      if (request == null) {
        return;
      }
      List<V2Oracle.ResolvedSeries> all = new ArrayList<>();
      for (io.prwrelay.oracle.v2.TimeSeries ts : request.getTimeseriesList()) {
        all.add(V2Oracle.resolve(ts, request.getSymbolsList()));
      }
      WriteRequest want = V2Oracle.toV1(all);
      WriteRequest got = WriteRequest.parseFrom(ByteBufUtil.getBytes(c.content()));
      assertEquals(want, FuzzInputs.withoutCopiedUnknowns(got));
      assertEquals(Oracle.counts(want), c.counts());
      assertEquals(got.getMetadataCount(), c.metadata(), "metadata written");
    } finally {
      c.content().release();
    }
  }
}
