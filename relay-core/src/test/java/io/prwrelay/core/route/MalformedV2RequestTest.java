package io.prwrelay.core.route;

import static io.prwrelay.testing.RawProto.bytes;
import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.groupStarts;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.str;
import static io.prwrelay.testing.RawProto.tag;
import static io.prwrelay.testing.RawProto.varint;
import static io.prwrelay.testing.RequestBuffers.MAX_OUTPUT;
import static io.prwrelay.testing.V2RawProto.exemplar;
import static io.prwrelay.testing.V2RawProto.metadata;
import static io.prwrelay.testing.V2RawProto.refs;
import static io.prwrelay.testing.V2RawProto.sample;
import static io.prwrelay.testing.V2RawProto.series;
import static io.prwrelay.testing.V2RawProto.symbols;
import static io.prwrelay.testing.V2RawProto.unpackedRefs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.CodedOutputStream;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.TimeSeries;
import io.prwrelay.testing.V2RequestGenerator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A malformed PRW 2.0 request always gives a typed error naming the field (series index and ref)
 * and byte offset: never an exception, never a wrong split, never a batch.
 */
class MalformedV2RequestTest {
  private static final TenantRules RULES =
      TenantRules.builder().labels("service_id", "team").removeLabel(true).build();

  /** "" , service_id, t, __name__, up: refs 0-4. */
  private static final byte[] TABLE = symbols("", "service_id", "t", "__name__", "up");

  /**
   * A request whose series 0 is {@code okSeries}-like and whose series 1 holds {@code parts}, so
   * errors name {@code timeseries[1]}.
   */
  private static byte[] secondSeries(byte[]... parts) {
    return cat(TABLE, series(refs(3, 4, 1, 2), sample(1, 1)), series(parts));
  }

  /** Offset of the first byte of series 1's content in {@link #secondSeries}. */
  private static int secondContent(byte[]... parts) {
    return TABLE.length
        + series(refs(3, 4, 1, 2), sample(1, 1)).length
        + 1
        + varint(cat(parts).length).length;
  }

  static Stream<Corruption> corruptions() {
    byte[] okRefs = refs(3, 4, 1, 2);
    int c = secondContent(okRefs);
    return Stream.of(
        new Corruption(
            "label ref past the table",
            secondSeries(refs(3, 4, 1, 5)),
            "timeseries[1].labels_refs[3]",
            c + 2 + 3,
            "ref 5 is out of range: the symbols table has 5 symbols"),
        new Corruption(
            "unpacked label ref past the table",
            secondSeries(unpackedRefs(3, 4, 9, 2)),
            "timeseries[1].labels_refs[2]",
            c + 2 + 2 + 1,
            "ref 9 is out of range"),
        new Corruption(
            "label ref beyond 32 bits",
            secondSeries(refs(3, 4, 1L << 35, 2)),
            "timeseries[1].labels_refs[2]",
            c + 2 + 2,
            "ref 34359738368 is out of range"),
        new Corruption(
            "label ref beyond 64 bits",
            secondSeries(len(1, bytes(0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01))),
            "timeseries[1].labels_refs[0]",
            c + 2,
            "ref 18446744073709551615 is out of range"),
        new Corruption(
            "odd number of label refs",
            secondSeries(refs(3, 4, 1), sample(1, 1)),
            "timeseries[1].labels_refs",
            secondContent(refs(3, 4, 1), sample(1, 1)),
            "holds 3 refs, an odd number"),
        new Corruption(
            "odd number of label refs split over packed and unpacked fields",
            secondSeries(refs(3, 4), unpackedRefs(1)),
            "timeseries[1].labels_refs",
            secondContent(refs(3, 4), unpackedRefs(1)),
            "holds 3 refs"),
        new Corruption(
            "exemplar label ref past the table",
            secondSeries(okRefs, sample(1, 1), exemplar(refs(1, 7))),
            "timeseries[1].exemplars[0].labels_refs[1]",
            -1,
            "ref 7 is out of range"),
        new Corruption(
            "odd number of exemplar label refs",
            secondSeries(okRefs, exemplar(refs(1, 2)), exemplar(refs(1))),
            "timeseries[1].exemplars[1].labels_refs",
            -1,
            "holds 1 refs, an odd number"),
        new Corruption(
            "metadata help_ref past the table",
            secondSeries(okRefs, metadata(1, 5, 0)),
            "timeseries[1].metadata.help_ref",
            -1,
            "ref 5 is out of range"),
        new Corruption(
            "metadata unit_ref past the table",
            secondSeries(okRefs, metadata(1, 0, 100)),
            "timeseries[1].metadata.unit_ref",
            -1,
            "ref 100 is out of range"),
        new Corruption(
            "metadata help_ref as a string",
            secondSeries(okRefs, len(5, str(3, "help text"))),
            "timeseries[1].metadata",
            -1,
            "field 3 has wire type length-delimited, expected varint"),
        new Corruption(
            "empty symbols table",
            series(refs(0, 0), sample(1, 1)),
            "symbols",
            0,
            "the symbols table is empty but the request has 1 timeseries"),
        new Corruption(
            "empty symbols table and a series without refs",
            series(sample(1, 1)),
            "symbols",
            0,
            "the symbols table is empty"),
        new Corruption(
            "first symbol not the empty string",
            cat(symbols("service_id", "", "t"), series(refs(0, 2))),
            "symbols[0]",
            2,
            "the first symbol must be the empty string, not a 10-byte string"),
        new Corruption(
            "first symbol not the empty string, no series",
            symbols("x"),
            "symbols[0]",
            2,
            "the first symbol must be the empty string"),
        new Corruption(
            "series length past the end",
            cat(TABLE, bytes(0x2A, 0x05, 0x01)),
            "timeseries[0]",
            TABLE.length + 1,
            "length 5 exceeds the 1 bytes left"),
        new Corruption(
            "symbol length past the end",
            cat(TABLE, bytes(0x22, 0x09, 'a')),
            "symbols[5]",
            TABLE.length + 1,
            "length 9 exceeds the 1 bytes left"),
        new Corruption(
            "truncated ref varint",
            secondSeries(len(1, bytes(0x03, 0x84))),
            "timeseries[1].labels_refs[1]",
            c + 4,
            "truncated"),
        new Corruption(
            "ref varint longer than ten bytes",
            secondSeries(
                len(1, bytes(0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01))),
            "timeseries[1].labels_refs[0]",
            c + 2,
            "malformed varint"),
        new Corruption(
            "truncated length varint",
            cat(TABLE, bytes(0x2A, 0x80)),
            "timeseries[0]",
            TABLE.length + 2,
            "truncated: the input ended in the middle of a field"),
        new Corruption(
            "timeseries with varint wire type",
            cat(TABLE, tag(5, 0), varint(1)),
            "Request",
            TABLE.length + 1,
            "field 5 has wire type varint, expected length-delimited"),
        new Corruption(
            "symbols with fixed32 wire type",
            cat(bytes(0x25, 0, 0, 0, 0)),
            "Request",
            1,
            "field 4 has wire type fixed32"),
        new Corruption(
            "labels_refs with fixed64 wire type",
            secondSeries(bytes(0x09, 0, 0, 0, 0, 0, 0, 0, 0)),
            "timeseries[1] field",
            c + 1,
            "field 1 has wire type fixed64, expected length-delimited (packed) or varint"),
        new Corruption(
            "samples with varint wire type",
            secondSeries(okRefs, bytes(0x10, 0x01)),
            "timeseries[1] field",
            -1,
            "field 2 has wire type varint, expected length-delimited"),
        new Corruption(
            "exemplar labels_refs with fixed32 wire type",
            secondSeries(okRefs, exemplar(bytes(0x0D, 0, 0, 0, 0))),
            "timeseries[1].exemplars[0]",
            -1,
            "field 1 has wire type fixed32"),
        new Corruption(
            "metadata length past the series",
            secondSeries(okRefs, bytes(0x2A, 0x10, 0x08)),
            "timeseries[1].metadata",
            -1,
            "length 16 exceeds the 1 bytes left"),
        new Corruption(
            "packed refs length past the series",
            secondSeries(bytes(0x0A, 0x20, 0x01)),
            "timeseries[1].labels_refs[0]",
            c + 1,
            "length 32 exceeds the 1 bytes left"),
        new Corruption(
            "unknown field length past the series",
            secondSeries(okRefs, bytes(0x3A, 0x7F)),
            "timeseries[1] field",
            -1,
            "length 127 exceeds the 0 bytes left"),
        new Corruption(
            "fixed64 unknown field cut by the series end",
            secondSeries(okRefs, bytes(0x39, 1, 2, 3)),
            "timeseries[1] field",
            -1,
            "truncated"),
        new Corruption(
            "a PRW 1.0 request sent as PRW 2.0",
            io.prwrelay.testing.RawProto.series(
                io.prwrelay.testing.RawProto.label("service_id", "t"),
                io.prwrelay.testing.RawProto.sample(1, 1)),
            "Request",
            0,
            "the body is a PRW 1.0 request sent as PRW 2.0"),
        new Corruption(
            "PRW 1.0 metadata sent as PRW 2.0",
            len(3, str(2, "up")),
            "Request",
            0,
            "Content-Type application/x-protobuf"),
        new Corruption("field number zero", cat(TABLE, bytes(0x00)), "Request", -1, "invalid tag"),
        new Corruption(
            "wire type 7", cat(TABLE, bytes(0x2F, 0x00)), "Request", -1, "invalid wire type 7"),
        new Corruption(
            "unexpected end-group",
            secondSeries(okRefs, tag(9, 4)),
            "timeseries[1] field",
            -1,
            "unexpected end-group tag"),
        new Corruption(
            "unterminated group",
            cat(TABLE, tag(7, 3), tag(8, 0), varint(1)),
            "Request",
            -1,
            "unterminated group"),
        new Corruption(
            "groups nested beyond the limit",
            cat(TABLE, groupStarts(7, 10_000)),
            "Request",
            -1,
            "groups nested deeper than 32"),
        new Corruption(
            "groups nested beyond the limit inside a series",
            secondSeries(okRefs, groupStarts(7, 40)),
            "timeseries[1] field",
            -1,
            "groups nested deeper than 32"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("corruptions")
  void corruptionIsATypedErrorNamingFieldAndOffset(Corruption corruption) {
    for (V2BatchEncoder.Format format : V2BatchEncoder.Format.values()) {
      RoutingProperties.assertMalformedAndRouterStillUsable(
          new V2TenantRouter(RULES, format, MAX_OUTPUT),
          corruption,
          cat(TABLE, series(refs(3, 4, 1, 2), sample(1, 1))));
    }
  }

  @Test
  void aNonMinimalTagAndLengthAreStillValid() {
    // Field 5 written as a two-byte tag, its length as a two-byte varint: odd but valid protobuf.
    byte[] body = cat(refs(3, 4, 1, 2), sample(1, 1));
    byte[] request = cat(TABLE, bytes(0xAA, 0x00), bytes(0x80 | body.length, 0x00), body);
    RouteResult result =
        RoutingProperties.route(
            new V2TenantRouter(RULES, V2BatchEncoder.Format.V2, MAX_OUTPUT), request);
    assertNull(result.error(), () -> result.error().message());
    assertEquals(1, result.batches().size());
    result.clear();
  }

  enum Layout {
    SYMBOLS_FIRST,
    SERIES_FIRST
  }

  /**
   * Cuts a valid request at every byte. A cut between two top-level fields leaves a shorter
   * request, which is valid when its symbols cover its series' refs and then routes like the
   * oracle; every other cut is a MALFORMED error with an offset inside what was read and a message
   * saying the input was truncated or a length exceeds what is left.
   */
  @ParameterizedTest
  @EnumSource(Layout.class)
  void everyTruncationIsAnErrorOrAValidShorterRequest(Layout layout) throws Exception {
    V2RequestGenerator gen = new V2RequestGenerator(11);
    gen.exemplarProbability = 1;
    gen.histogramProbability = 0.5;
    gen.metadataProbability = 1;
    gen.createdTimestampProbability = 1;
    gen.maxExtraLabels = 3;
    gen.unusualEncoding = 0;
    Request full = gen.request(4, RULES.labels()).request();
    // Top-level fields in byte order: (true, i) = symbols[i], (false, i) = timeseries[i].
    List<int[]> fields = new ArrayList<>();
    List<Integer> ends = new ArrayList<>();
    StringBuilder order = new StringBuilder();
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    CodedOutputStream c = CodedOutputStream.newInstance(out);
    for (int pass = 0; pass < 2; pass++) {
      boolean symbolsNow = (pass == 0) == (layout == Layout.SYMBOLS_FIRST);
      int n = symbolsNow ? full.getSymbolsCount() : full.getTimeseriesCount();
      for (int i = 0; i < n; i++) {
        if (symbolsNow) {
          c.writeString(4, full.getSymbols(i));
        } else {
          c.writeMessage(5, full.getTimeseries(i));
        }
        c.flush();
        fields.add(new int[] {symbolsNow ? 1 : 0, i});
        ends.add(out.size());
        order.append(symbolsNow ? 'S' : 'T');
      }
    }
    byte[] bytes = out.toByteArray();
    int checkedValid = 0;
    int checkedErrors = 0;
    for (V2BatchEncoder.Format format : V2BatchEncoder.Format.values()) {
      V2TenantRouter router = new V2TenantRouter(RULES, format, MAX_OUTPUT);
      for (int at = 0; at < bytes.length; at++) {
        int cut = at;
        RouteResult result = RoutingProperties.route(router, Arrays.copyOf(bytes, cut));
        int kept = cut == 0 ? 0 : ends.indexOf(cut) + 1;
        Request shorter = kept > 0 || cut == 0 ? prefix(full, fields.subList(0, kept)) : null;
        if (shorter != null && valid(shorter)) {
          V2RouteAssertions.assertRoutedLikeOracle(shorter, RULES, result, format);
          checkedValid++;
        } else {
          RequestError error = result.error();
          assertNotNull(error, () -> "cut at " + cut + " of " + order + " must be an error");
          assertEquals(RequestError.Kind.MALFORMED, error.kind());
          assertTrue(error.offset() >= 0 && error.offset() <= cut, error::message);
          String p = error.problem();
          if (shorter == null) {
            assertTrue(
                p.startsWith("truncated") || p.contains("exceeds the"),
                () -> "cut " + cut + ": " + p);
          } else {
            assertTrue(
                p.contains("is out of range") || p.contains("symbols table is empty"),
                () -> "cut " + cut + ": " + p);
          }
          assertEquals(0, result.batches().size());
          checkedErrors++;
        }
        result.clear();
      }
    }
    assertTrue(checkedValid > 0 && checkedErrors > 0);
  }

  private static Request prefix(Request full, List<int[]> fields) {
    Request.Builder b = Request.newBuilder();
    for (int[] f : fields) {
      if (f[0] == 1) {
        b.addSymbols(full.getSymbols(f[1]));
      } else {
        b.addTimeseries(full.getTimeseries(f[1]));
      }
    }
    return b.build();
  }

  /** Whether every ref of the request indexes its table (and the table is there). */
  private static boolean valid(Request r) {
    int n = r.getSymbolsCount();
    if (r.getTimeseriesCount() > 0 && n == 0) {
      return false;
    }
    for (TimeSeries ts : r.getTimeseriesList()) {
      for (int ref : ts.getLabelsRefsList()) {
        if (ref >= n) {
          return false;
        }
      }
      for (io.prwrelay.oracle.v2.Exemplar e : ts.getExemplarsList()) {
        for (int ref : e.getLabelsRefsList()) {
          if (ref >= n) {
            return false;
          }
        }
      }
      if (ts.getMetadata().getHelpRef() >= n || ts.getMetadata().getUnitRef() >= n) {
        return false;
      }
    }
    return true;
  }
}
