package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.protocol.Protocol;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Fragments of a Prometheus HA pair for the lane tests, and the judgement Cortex and Mimir pass on
 * each request they get: by its first series' {@code cluster} and {@code __replica__}.
 */
final class HaPairs {
  private HaPairs() {}

  /**
   * One series of replica {@code replica} of {@code cluster} (either {@code null}: the label is
   * absent), marked with label {@code id}.
   */
  static TimeSeries series(String cluster, String replica, String id) {
    TimeSeries.Builder b = TimeSeries.newBuilder();
    b.addLabels(Label.newBuilder().setName("__name__").setValue("up"));
    if (replica != null) {
      b.addLabels(Label.newBuilder().setName("__replica__").setValue(replica));
    }
    if (cluster != null) {
      b.addLabels(Label.newBuilder().setName("cluster").setValue(cluster));
    }
    b.addLabels(Label.newBuilder().setName("id").setValue(id));
    return b.addSamples(Sample.newBuilder().setValue(1).setTimestamp(1000)).build();
  }

  /** A PRW 1.0 request of {@code series}, in order. */
  static byte[] request(TimeSeries... series) {
    return WriteRequest.newBuilder().addAllTimeseries(List.of(series)).build().toByteArray();
  }

  /**
   * A fragment of {@code bytes} (a PRW 1.0 request) in a pooled direct buffer, answered once into
   * {@code outcomes} under {@code id}.
   */
  static Fragment fragment(
      String id,
      String tenant,
      byte[] bytes,
      long deadline,
      Map<String, FragmentOutcome> outcomes) {
    ByteBuf body = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes);
    return new Fragment(
        tenant,
        body,
        new SeriesCounts(1, 1, 0, 0),
        deadline,
        LaneTesting.answeredOnce(outcomes, id));
  }

  /** A fragment of one series of {@code replica} of {@code cluster}, marked {@code id}. */
  static Fragment fragment(
      String id,
      String tenant,
      String cluster,
      String replica,
      long deadline,
      Map<String, FragmentOutcome> outcomes) {
    return fragment(id, tenant, request(series(cluster, replica, id)), deadline, outcomes);
  }

  /**
   * The same as a sender body forwarded as it came: one snappy block ({@link Fragment#ofBlock}).
   */
  static Fragment forwarded(
      String id,
      String tenant,
      String cluster,
      String replica,
      long deadline,
      Map<String, FragmentOutcome> outcomes) {
    byte[] bytes = request(series(cluster, replica, id));
    ByteBuf plain = PooledByteBufAllocator.DEFAULT.heapBuffer().writeBytes(bytes);
    ByteBuf block;
    try {
      block = SnappyCodec.encode(plain, PooledByteBufAllocator.DEFAULT);
    } finally {
      plain.release();
    }
    return Fragment.ofBlock(
        tenant,
        Protocol.V1,
        block,
        bytes.length,
        new SeriesCounts(1, 1, 0, 0),
        deadline,
        LaneTesting.answeredOnce(outcomes, id));
  }

  /**
   * A fragment of one series of {@code replica} of {@code cluster} marked {@code id}, of at least
   * {@code bytes} bytes (a {@code pad} label): large enough to leave from the loop that routed it.
   */
  static Fragment large(
      String id,
      String tenant,
      String cluster,
      String replica,
      int bytes,
      long deadline,
      Map<String, FragmentOutcome> outcomes) {
    TimeSeries s =
        series(cluster, replica, id).toBuilder()
            .addLabels(Label.newBuilder().setName("pad").setValue("p".repeat(bytes)))
            .build();
    return fragment(id, tenant, request(s), deadline, outcomes);
  }

  /** The series of one request, each as {@code replica:id} ({@code -} for an absent replica). */
  static List<String> seriesOf(byte[] body) {
    try {
      List<String> out = new ArrayList<>();
      for (TimeSeries ts : WriteRequest.parseFrom(body).getTimeseriesList()) {
        String replica = "-";
        String id = "?";
        for (Label l : ts.getLabelsList()) {
          if (l.getName().equals("__replica__")) {
            replica = l.getValue();
          } else if (l.getName().equals("id")) {
            id = l.getValue();
          }
        }
        out.add(replica + ":" + id);
      }
      return out;
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new AssertionError("the downstream got an invalid request", e);
    }
  }

  /** Every request {@code tenant} got, as {@link #seriesOf} lists. */
  static List<List<String>> requests(ScriptedSender downstream, String tenant) {
    List<List<String>> out = new ArrayList<>();
    for (ScriptedSender.Call c : downstream.callsTo(tenant)) {
      out.add(seriesOf(c.body()));
    }
    return out;
  }
}
