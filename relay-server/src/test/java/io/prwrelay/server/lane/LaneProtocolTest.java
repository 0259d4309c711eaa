package io.prwrelay.server.lane;

import static io.prwrelay.testing.V2RawProto.refs;
import static io.prwrelay.testing.V2RawProto.request;
import static io.prwrelay.testing.V2RawProto.sample;
import static io.prwrelay.testing.V2RawProto.series;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.core.encode.SeriesCounts;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.oracle.v2.Request;
import io.prwrelay.oracle.v2.TimeSeries;
import io.prwrelay.server.config.DownstreamConfig.ProtocolMode;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.ScriptedSender.Reply;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import io.prwrelay.server.protocol.Protocol;
import io.prwrelay.server.protocol.WrittenCounts;
import io.prwrelay.testing.V2Oracle;
import io.prwrelay.testing.V2RawProto;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A lane with PRW 2.0 fragments: never merged with each other or with PRW 1.0 ones, converted to
 * 1.0 when the downstream takes only 1.0, and in {@code auto} mode re-sent converted after a 415.
 */
class LaneProtocolTest {
  private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
  private static final long DEADLINE = TimeUnit.SECONDS.toNanos(10);

  /** A valid PRW 2.0 request of tenant a with two samples. */
  private static final byte[] V2 =
      request(
          new String[] {"", "__name__", "up", "service_id", "a"},
          series(refs(1, 2, 3, 4), sample(1, 1), sample(2, 2)));

  private final SimulatedLoop sim = new SimulatedLoop();
  private final ScriptedSender downstream = new ScriptedSender();
  private final Map<String, FragmentOutcome> outcomes = new LinkedHashMap<>();
  private DownstreamProtocol protocol;
  private Lanes lanes;

  private void lanes(ProtocolMode mode) {
    lanes(mode, LaneTesting.MAX_CONVERTED);
  }

  /**
   * Lanes in {@code mode} that convert PRW 2.0 batches to PRW 1.0 of at most {@code maxConverted}
   * bytes.
   */
  private void lanes(ProtocolMode mode, int maxConverted) {
    protocol = new DownstreamProtocol(mode);
    LaneSettings t = LaneTesting.settings(1, 1 << 20, 1 << 20, 5);
    LaneSettings s =
        new LaneSettings(
            t.maxConcurrentSends(),
            t.maxPendingBytes(),
            t.batchMaxBytes(),
            t.linger(),
            t.idleTimeout(),
            t.maxLanes(),
            t.initialBackoff(),
            t.maxBackoff(),
            t.attemptTimeout(),
            maxConverted);
    lanes = new Lanes(List.of(sim.loop()), s, downstream, ALLOC, LaneObserver.NONE, null, protocol);
  }

  /** The PRW 1.0 request the oracle converts {@code v2} to. */
  private static WriteRequest converted(byte[] v2) throws Exception {
    Request r = Request.parseFrom(v2);
    List<V2Oracle.ResolvedSeries> all = new ArrayList<>();
    for (TimeSeries ts : r.getTimeseriesList()) {
      all.add(V2Oracle.resolve(ts, r.getSymbolsList()));
    }
    return V2Oracle.toV1(all);
  }

  private Fragment fragment(String id, Protocol p, byte[] bytes) {
    return new Fragment(
        "a",
        p,
        ALLOC.heapBuffer(bytes.length).writeBytes(bytes),
        new SeriesCounts(1, 2, 0, 0),
        sim.now() + DEADLINE,
        LaneTesting.answeredOnce(outcomes, id));
  }

  private Fragment text(String id, Protocol p) {
    return fragment(id, p, id.getBytes(StandardCharsets.UTF_8));
  }

  private void submit(Fragment... fragments) {
    lanes.submit(List.of(fragments));
    sim.runDue();
  }

  @AfterEach
  void close() {
    for (int i = 0; i < 10; i++) {
      sim.advance(Duration.ofMinutes(1));
    }
    if (lanes != null) {
      lanes.close();
    }
    assertFalse(sim.channel().finishAndReleaseAll());
  }

  @Test
  void v2FragmentsTravelAloneWhileWaitingV1FragmentsAreMerged() {
    lanes(ProtocolMode.V2);
    downstream.script("a", Reply.status(200).after(Duration.ofMillis(50)));
    submit(text("p1", Protocol.V1));
    submit(
        text("x", Protocol.V2),
        text("y", Protocol.V2),
        text("p2", Protocol.V1),
        text("p3", Protocol.V1));
    sim.advance(Duration.ofSeconds(1));
    List<ScriptedSender.Call> calls = downstream.callsTo("a");
    assertEquals(
        List.of("p1", "x", "y", "p2p3"), calls.stream().map(ScriptedSender.Call::text).toList());
    assertEquals(
        List.of(Protocol.V1, Protocol.V2, Protocol.V2, Protocol.V1),
        calls.stream().map(ScriptedSender.Call::protocol).toList());
    assertEquals(5, outcomes.size());
    outcomes.values().forEach(o -> assertEquals(Kind.DELIVERED, o.kind()));
  }

  @Test
  void v2FragmentIsConvertedForAV1Downstream() throws Exception {
    lanes(ProtocolMode.V1);
    submit(fragment("x", Protocol.V2, V2));
    ScriptedSender.Call call = downstream.callsTo("a").get(0);
    assertEquals(Protocol.V1, call.protocol());
    assertEquals(2, WriteRequest.parseFrom(call.body()).getTimeseries(0).getSamplesCount());
    assertEquals(Kind.DELIVERED, outcomes.get("x").kind());
  }

  @Test
  void v2FragmentThatDoesNotConvertIsRejectedWithoutASend() {
    lanes(ProtocolMode.V1);
    submit(text("not a request", Protocol.V2));
    assertEquals(List.of(), downstream.callsTo("a"));
    FragmentOutcome o = outcomes.get("not a request");
    assertEquals(Kind.REJECTED, o.kind());
    assertTrue(o.message().contains("Remote Write 1.0"), o.message());
  }

  @Test
  void v2FragmentThatWouldConvertPastTheBoundIsRejectedWithoutASend() throws Exception {
    // 100 series referencing one 64 KiB symbol: 6.5 MB as PRW 1.0.
    byte[] big = V2RawProto.symbolInEverySeries("x".repeat(64 << 10), 100, 1);
    int size = converted(big).getSerializedSize();
    lanes(ProtocolMode.V1, 1 << 20);
    submit(fragment("big", Protocol.V2, big));
    assertEquals(List.of(), downstream.callsTo("a"));
    FragmentOutcome o = outcomes.get("big");
    assertEquals(Kind.REJECTED, o.kind());
    assertEquals(400, o.status());
    assertEquals(
        "cannot convert the batch to Remote Write 1.0: converting this PRW 2.0 request to PRW 1.0"
            + " would take "
            + size
            + " bytes, more than relay.server.max-decompressed-bytes=1048576 (PRW 1.0 repeats a"
            + " string in every series that references it)",
        o.message());
  }

  @Test
  void v2FragmentThatConvertsToExactlyTheBoundIsSent() throws Exception {
    byte[] fits = V2RawProto.symbolInEverySeries("x".repeat(64 << 10), 15, 1);
    WriteRequest want = converted(fits);
    lanes(ProtocolMode.V1, want.getSerializedSize());
    submit(fragment("fits", Protocol.V2, fits));
    ScriptedSender.Call call = downstream.callsTo("a").get(0);
    assertEquals(Protocol.V1, call.protocol());
    assertEquals(want, WriteRequest.parseFrom(call.body()));
    assertEquals(Kind.DELIVERED, outcomes.get("fits").kind());
  }

  @Test
  void autoRejectsAfterA415AFragmentThatWouldConvertPastTheBound() throws Exception {
    byte[] big = V2RawProto.symbolInEverySeries("x".repeat(64 << 10), 100, 1);
    lanes(ProtocolMode.AUTO, 1 << 20);
    downstream.script("a", Reply.status(415, "unsupported content type"));
    submit(fragment("big", Protocol.V2, big));
    sim.advance(Duration.ofMillis(10));
    assertEquals(
        List.of(Protocol.V2),
        downstream.callsTo("a").stream().map(ScriptedSender.Call::protocol).toList(),
        "the refused PRW 2.0 attempt only");
    FragmentOutcome o = outcomes.get("big");
    assertEquals(Kind.REJECTED, o.kind());
    assertTrue(o.message().contains("relay.server.max-decompressed-bytes=1048576"), o.message());
    assertEquals(Protocol.V1, protocol.forV2Input());
  }

  @Test
  void autoResendsConvertedAfterA415AndKeepsSendingV1() throws Exception {
    lanes(ProtocolMode.AUTO);
    downstream.script("a", Reply.status(415, "unsupported content type"));
    submit(fragment("x", Protocol.V2, V2));
    sim.advance(Duration.ofMillis(10));
    submit(fragment("y", Protocol.V2, V2));
    List<ScriptedSender.Call> calls = downstream.callsTo("a");
    assertEquals(
        List.of(Protocol.V2, Protocol.V1, Protocol.V1),
        calls.stream().map(ScriptedSender.Call::protocol).toList());
    assertEquals(2, WriteRequest.parseFrom(calls.get(1).body()).getTimeseries(0).getSamplesCount());
    assertEquals(Kind.DELIVERED, outcomes.get("x").kind());
    assertEquals(Kind.DELIVERED, outcomes.get("y").kind());
    assertEquals(Protocol.V1, protocol.forV2Input());
    assertEquals(1, protocol.fallbacks());
  }

  @Test
  void a415InV2ModeIsARejection() {
    lanes(ProtocolMode.V2);
    downstream.script("a", Reply.status(415, "unsupported content type"));
    submit(fragment("x", Protocol.V2, V2));
    assertEquals(1, downstream.callsTo("a").size());
    assertEquals(Kind.REJECTED, outcomes.get("x").kind());
    assertEquals(Protocol.V2, protocol.forV2Input());
  }

  @Test
  void writtenCountsOfTheDownstreamBelongToALoneFragment() {
    lanes(ProtocolMode.V2);
    downstream.script(
        "a", new Reply(new AttemptOutcome(200, "", -1, new WrittenCounts(2, 0, 1)), Duration.ZERO));
    submit(fragment("x", Protocol.V2, V2));
    assertEquals(new WrittenCounts(2, 0, 1), outcomes.get("x").written());
  }
}
