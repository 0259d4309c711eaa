package io.prwrelay.testing;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.oracle.v1.BucketSpan;
import io.prwrelay.oracle.v1.Histogram;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * What the fuzz tests share: fuzzed bytes as the buffers the relay meets, and the oracle's reading
 * of bytes the relay accepted.
 */
public final class FuzzInputs {
  private FuzzInputs() {}

  /**
   * {@code data} as a buffer the caller owns: a heap buffer over the array for inputs of even
   * length, a pooled direct copy for odd lengths, so both of the relay's read paths are fuzzed.
   */
  public static ByteBuf wrap(byte[] data, ByteBufAllocator alloc) {
    if ((data.length & 1) == 0) {
      return Unpooled.wrappedBuffer(data);
    }
    ByteBuf direct = alloc.directBuffer(data.length, data.length);
    return direct.writeBytes(data);
  }

  /**
   * The PRW 1.0 request the oracle reads from bytes the relay accepted, or {@code null} when the
   * oracle rejects them. The relay validates the request's structure and every label, and by design
   * passes the rest of a series through by its length without looking inside: samples, exemplars,
   * histograms (the downstream answers 400 for a broken one), and strings that are not UTF-8
   * (proto3 strings must be; the Go receivers do not check either). For such bytes there is no
   * reference answer to compare with.
   */
  public static WriteRequest parseV1(byte[] data) {
    try {
      return WriteRequest.parseFrom(data);
    } catch (InvalidProtocolBufferException e) {
      return null;
    }
  }

  /**
   * {@code r} as the oracle writes a PRW 1.0 request converted from 2.0, for comparison: the
   * unknown fields of its samples and histograms (and their spans) left out, and each distinct
   * metadata once. Converting, the relay copies a sample's or histogram's bytes whole, unknown
   * fields included (docs/ARCHITECTURE.md#remote-write-facts-the-relay-relies-on: unknown fields
   * are copied, never a reason to fail), where the oracle rebuilds them from their known fields;
   * and it writes one metadata per distinct symbol references, so a request whose symbols table
   * repeats a string can give two equal metadata where the oracle gives one.
   */
  public static WriteRequest withoutCopiedUnknowns(WriteRequest r) {
    WriteRequest.Builder b = r.toBuilder();
    for (TimeSeries.Builder ts : b.getTimeseriesBuilderList()) {
      for (Sample.Builder s : ts.getSamplesBuilderList()) {
        s.setUnknownFields(UnknownFieldSet.getDefaultInstance());
      }
      for (Histogram.Builder h : ts.getHistogramsBuilderList()) {
        h.setUnknownFields(UnknownFieldSet.getDefaultInstance());
        for (BucketSpan.Builder s : h.getNegativeSpansBuilderList()) {
          s.setUnknownFields(UnknownFieldSet.getDefaultInstance());
        }
        for (BucketSpan.Builder s : h.getPositiveSpansBuilderList()) {
          s.setUnknownFields(UnknownFieldSet.getDefaultInstance());
        }
      }
    }
    List<MetricMetadata> distinct = new ArrayList<>(new LinkedHashSet<>(b.getMetadataList()));
    b.clearMetadata().addAllMetadata(distinct);
    return b.build();
  }

  /** {@link #parseV1} for a PRW 2.0 request. */
  public static Request parseV2(byte[] data) {
    try {
      return Request.parseFrom(data);
    } catch (InvalidProtocolBufferException e) {
      return null;
    }
  }
}
