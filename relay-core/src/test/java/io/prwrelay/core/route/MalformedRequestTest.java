package io.prwrelay.core.route;

import static io.prwrelay.testing.RawProto.bytes;
import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.groupStarts;
import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.sample;
import static io.prwrelay.testing.RawProto.series;
import static io.prwrelay.testing.RawProto.str;
import static io.prwrelay.testing.RawProto.tag;
import static io.prwrelay.testing.RawProto.varint;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.CodedOutputStream;
import io.netty.buffer.ByteBufUtil;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.testing.RequestGenerator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed input always gives a typed error naming the field and byte offset: never an exception,
 * never a wrong split, never a batch.
 */
class MalformedRequestTest {
  private static final TenantRules RULES =
      TenantRules.builder().labels("service_id", "team").removeLabel(true).build();

  @Test
  void everyTruncationIsAnErrorOrAValidShorterRequest() throws Exception {
    RequestGenerator gen = new RequestGenerator(7);
    gen.exemplarProbability = 1;
    gen.histogramProbability = 1;
    gen.maxExtraLabels = 4;
    WriteRequest full = gen.request(4, RULES.labels());
    while (full.getMetadataCount() == 0) {
      full = gen.request(4, RULES.labels());
    }
    byte[] bytes = full.toByteArray();
    // Top-level field boundaries as the oracle serializes them: all series, then all metadata.
    List<Integer> boundaries = new ArrayList<>();
    int at = 0;
    boundaries.add(0);
    for (TimeSeries ts : full.getTimeseriesList()) {
      at += CodedOutputStream.computeMessageSize(1, ts);
      boundaries.add(at);
    }
    for (MetricMetadata m : full.getMetadataList()) {
      at += CodedOutputStream.computeMessageSize(3, m);
      boundaries.add(at);
    }
    assertEquals(bytes.length, at);
    TenantRouter router = new TenantRouter(RULES);
    for (int cut = 0; cut < bytes.length; cut++) {
      byte[] prefix = Arrays.copyOf(bytes, cut);
      RouteResult result = RoutingProperties.route(router, prefix);
      int fields = boundaries.indexOf(cut);
      if (fields >= 0) {
        WriteRequest.Builder shorter = WriteRequest.newBuilder();
        int series = Math.min(fields, full.getTimeseriesCount());
        shorter.addAllTimeseries(full.getTimeseriesList().subList(0, series));
        shorter.addAllMetadata(full.getMetadataList().subList(0, fields - series));
        RouteAssertions.assertRoutedLikeOracle(shorter.build(), RULES, result);
      } else {
        RequestError error = result.error();
        assertNotNull(error, "cut at " + cut + " must be an error");
        assertEquals(RequestError.Kind.MALFORMED, error.kind());
        assertTrue(error.offset() >= 0 && error.offset() <= cut, error::message);
        assertEquals(0, result.batches().size());
      }
      result.clear();
    }
  }

  static Stream<Corruption> corruptions() {
    byte[] okSeries = series(label("service_id", "t"), sample(1, 1));
    return Stream.of(
        new Corruption(
            "a PRW 2.0 request sent as PRW 1.0",
            cat(
                io.prwrelay.testing.V2RawProto.symbols("", "service_id", "t"),
                io.prwrelay.testing.V2RawProto.series(
                    io.prwrelay.testing.V2RawProto.refs(1, 2),
                    io.prwrelay.testing.V2RawProto.sample(1, 1))),
            "WriteRequest",
            0,
            "the body is a PRW 2.0 request sent as PRW 1.0"),
        new Corruption(
            "a PRW 2.0 request led by its series sent as PRW 1.0",
            cat(
                io.prwrelay.testing.V2RawProto.series(
                    io.prwrelay.testing.V2RawProto.refs(1, 2),
                    io.prwrelay.testing.V2RawProto.sample(1, 1)),
                io.prwrelay.testing.V2RawProto.symbols("", "service_id", "t")),
            "WriteRequest",
            0,
            "Content-Type application/x-protobuf;proto=io.prometheus.write.v2.Request"),
        new Corruption(
            "series length past the end",
            bytes(0x0A, 0x05, 0x01, 0x02),
            "timeseries[0]",
            1,
            "length 5 exceeds the 2 bytes left"),
        new Corruption(
            "truncated length varint", bytes(0x0A, 0x80), "timeseries[0]", 2, "truncated"),
        new Corruption(
            "varint longer than ten bytes",
            cat(
                bytes(0x0A),
                bytes(0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01)),
            "timeseries[0]",
            -1,
            "malformed varint"),
        new Corruption(
            "length beyond 2 GiB",
            cat(bytes(0x0A), varint(0xFFFF_FFFFL)),
            "timeseries[0]",
            1,
            "length 4294967295 exceeds the 0 bytes left"),
        // A length of 2^32 or more must not be cut to its low 32 bits (2^32 + 8 read as 8): the
        // relay would route bytes that every conforming parser rejects as a truncated field.
        new Corruption(
            "series length of 2^32 + 8",
            cat(bytes(0x0A), varint((1L << 32) + 8), label("service_id", "t")),
            "timeseries[0]",
            1,
            "length 4294967304 exceeds the 17 bytes left"),
        new Corruption(
            "label length of 2^32",
            series(cat(bytes(0x0A), varint(1L << 32)), label("service_id", "t")),
            "timeseries[0].labels[0]",
            3,
            "length 4294967296 exceeds the"),
        new Corruption(
            "unknown field of length 2^32 before the tenant label",
            series(cat(bytes(0x4A), varint(1L << 32)), label("service_id", "t")),
            "timeseries[0] field",
            3,
            "length 4294967296 exceeds the"),
        new Corruption(
            "unknown top-level field of length 2^32",
            cat(bytes(0x4A), varint(1L << 32), series(label("service_id", "t"))),
            "WriteRequest",
            1,
            "length 4294967296 exceeds the"),
        new Corruption(
            "timeseries with varint wire type",
            cat(okSeries, bytes(0x08, 0x01)),
            "WriteRequest",
            okSeries.length + 1,
            "field 1 has wire type varint, expected length-delimited"),
        new Corruption(
            "metadata with fixed32 wire type",
            bytes(0x1D, 0, 0, 0, 0),
            "WriteRequest",
            1,
            "field 3 has wire type fixed32"),
        new Corruption(
            "labels with varint wire type",
            series(bytes(0x08, 0x01)),
            "timeseries[0] field",
            3,
            "field 1 has wire type varint"),
        new Corruption(
            "samples with fixed64 wire type before the tenant label",
            series(bytes(0x11, 0, 0, 0, 0, 0, 0, 0, 0), label("service_id", "t")),
            "timeseries[0] field",
            -1,
            "field 2 has wire type fixed64"),
        new Corruption(
            "label without a name",
            cat(okSeries, series(len(1, str(2, "value-only")), sample(1, 1))),
            "timeseries[1].labels[0]",
            okSeries.length + 2,
            "label without a name"),
        new Corruption(
            "label with an empty name",
            series(len(1, str(1, ""), str(2, "x"))),
            "timeseries[0].labels[0]",
            2,
            "label without a name"),
        new Corruption(
            "label name with varint wire type",
            series(len(1, bytes(0x08, 0x01), str(2, "v"))),
            "timeseries[0].labels[0]",
            5,
            "field 1 has wire type varint"),
        new Corruption(
            "label name length past the label",
            series(len(1, bytes(0x0A, 0x09, 'a'))),
            "timeseries[0].labels[0].name",
            5,
            "length 9 exceeds the 1 bytes left"),
        new Corruption(
            "label length past the series",
            series(bytes(0x0A, 0x30, 0x0A, 0x01, 'a')),
            "timeseries[0].labels[0]",
            3,
            "length 48 exceeds the 3 bytes left"),
        new Corruption(
            "sample length past the series before the tenant label",
            series(bytes(0x12, 0x7F), label("service_id", "t")),
            "timeseries[0] field",
            -1,
            "length 127 exceeds the"),
        new Corruption(
            "sample length past the series in a series without the first tenant label",
            series(label("team", "t"), bytes(0x12, 0x7F)),
            "timeseries[0] field",
            -1,
            "length 127 exceeds the 0 bytes left"),
        new Corruption(
            "metadata length past the end",
            bytes(0x1A, 0x04, 0x08),
            "metadata",
            1,
            "length 4 exceeds the 1 bytes left"),
        new Corruption(
            "field number zero", cat(okSeries, bytes(0x00)), "WriteRequest", -1, "invalid tag"),
        new Corruption("wire type 7", bytes(0x2F, 0x00), "WriteRequest", -1, "invalid wire type"),
        new Corruption(
            "unexpected end-group",
            cat(okSeries, tag(5, 4)),
            "WriteRequest",
            okSeries.length + 1,
            "unexpected end-group tag"),
        new Corruption(
            "unterminated group",
            cat(tag(5, 3), tag(6, 0), varint(1)),
            "WriteRequest",
            -1,
            "unterminated group"),
        new Corruption(
            "groups nested beyond the limit",
            groupStarts(5, 10_000),
            "WriteRequest",
            -1,
            "groups nested deeper than 32"),
        new Corruption(
            "groups nested beyond the limit inside a label",
            series(len(1, str(1, "n"), groupStarts(5, 40))),
            "timeseries[0].labels[0]",
            -1,
            "groups nested deeper than 32"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("corruptions")
  void corruptionIsATypedErrorNamingFieldAndOffset(Corruption corruption) {
    RoutingProperties.assertMalformedAndRouterStillUsable(
        new TenantRouter(RULES), corruption, series(label("service_id", "t"), sample(1, 1)));
  }

  /** Fields after the tenant label that are not valid protobuf, each in a well-framed series. */
  static Stream<Arguments> malformedTails() {
    return Stream.of(
        Arguments.of("samples with fixed64 wire type", bytes(0x11, 0, 0, 0, 0, 0, 0, 0, 0)),
        Arguments.of("sample length past the series", bytes(0x12, 0x7F)),
        Arguments.of("truncated tag", bytes(0x80)),
        Arguments.of("field number zero", bytes(0x00, 0x01)));
  }

  /**
   * A label after the tenant label is skipped by its length, unread, also by a router that counts.
   */
  static Stream<Arguments> malformedLabelsAfterTheTenantLabel() {
    return Stream.of(Arguments.of("label without a name", len(1, str(2, "value-only"))));
  }

  /**
   * docs/ARCHITECTURE.md#the-data-path and docs/http-api.md: inside a series, what follows the
   * label that decides its tenant is forwarded as received and left to the downstream (which parses
   * the batch whole and answers 400 for it): the relay does not read it, so it neither reports it
   * nor changes it. The label to remove is still found, also after a lower-priority tenant label.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource({"malformedTails", "malformedLabelsAfterTheTenantLabel"})
  void malformedBytesAfterTheTenantLabelAreForwardedAsReceived(String name, byte[] tail) {
    byte[] s = series(label("team", "x"), label("service_id", "t"), tail);
    RouteResult result = RoutingProperties.route(new TenantRouter(RULES), s);
    assertNull(result.error(), name);
    assertEquals(1, result.batches().size());
    assertEquals("t", result.batches().get(0).tenant());
    assertArrayEquals(
        series(label("team", "x"), tail), ByteBufUtil.getBytes(result.batches().get(0).content()));
    result.clear();
  }

  /**
   * A router that counts samples walks every field of every series, so a field's framing after the
   * tenant label is a typed error there, and nothing is forwarded.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("malformedTails")
  void malformedBytesAfterTheTenantLabelAreAnErrorWhenCountingSamples(String name, byte[] tail) {
    TenantRules counting =
        TenantRules.builder()
            .labels("service_id", "team")
            .removeLabel(true)
            .countSamples(true)
            .build();
    byte[] s = series(label("team", "x"), label("service_id", "t"), tail);
    RouteResult result = RoutingProperties.route(new TenantRouter(counting), s);
    assertNotNull(result.error(), name);
    assertEquals(RequestError.Kind.MALFORMED, result.error().kind());
    assertTrue(result.error().field().startsWith("timeseries[0]"), result.error()::message);
    assertEquals(0, result.batches().size());
    result.clear();
  }
}
