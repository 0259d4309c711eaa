package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.micrometer.core.instrument.Counter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.util.concurrent.FastThreadLocal;
import io.prwrelay.core.route.TenantProblem;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.lane.Lanes;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.testing.FuzzInputs;
import io.prwrelay.testing.Oracle;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.xerial.snappy.Snappy;

/**
 * Fuzzed bytes at the ingress of one connection: the pipeline every accepted connection gets
 * (HTTP/1.1 codec, {@code 100-continue}, {@link IngressHandler}) on an {@link EmbeddedChannel} with
 * simulated time and a scripted downstream.
 *
 * <ul>
 *   <li>As the raw byte stream of a connection: every answer is a 1xx, 2xx or 4xx (nothing the
 *       sender sends is the relay's fault), no error inside the relay, nothing leaks.
 *   <li>As the uncompressed body of a well-formed write request: 204 with every tenant's delivered
 *       batch decoding to exactly the oracle's series for that tenant, or 400 naming the problem.
 * </ul>
 *
 * <p>The default build replays the inputs under {@code IngressFuzzTestInputs/<method>}; {@code
 * JAZZER_FUZZ=1} fuzzes one method (docs/testing.md, "Fuzzing").
 */
class IngressFuzzTest {
  private static final Map<String, String> CONFIG =
      Map.of(
          "relay.server.max-request-bytes", "65536",
          "relay.server.max-decompressed-bytes", "262144",
          "relay.server.read-timeout", "2s",
          "relay.tenant.labels", "service_id,instance",
          "relay.tenant.remove-label", "true",
          "relay.downstream.timeout", "2s",
          "relay.downstream.attempt-timeout", "1s");
  private static final RelayConfig RELAY = load();
  private static final Pattern STATUS = Pattern.compile("(?m)^HTTP/1\\.[01] (\\d{3}) ");

  /** Shared by every execution: a registry per execution would churn the heap of a long run. */
  private static final RelayMetrics METRICS = new RelayMetrics(10, ByteBufAllocator.DEFAULT);

  private static double internalErrorsSoFar() {
    double n = 0;
    for (Counter c : METRICS.registry().find("relay.internal.errors").counters()) {
      n += c.count();
    }
    return n;
  }

  private static RelayConfig load() {
    try {
      return RelayConfig.load(null, CONFIG, Map.of());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** One connection to an ingress of its own. */
  private static final class Connection implements AutoCloseable {
    final ScriptedSender sender = new ScriptedSender();
    final RelayMetrics metrics = METRICS;
    final double internalErrorsBefore = internalErrorsSoFar();
    final SimulatedLoop sim;
    final EmbeddedChannel channel;
    final Lanes lanes;

    Connection(boolean rawBytes) throws IOException {
      IngressFixture opened =
          rawBytes
              ? IngressFixture.fullPipeline(RELAY, sender, metrics)
              : IngressFixture.handlerOnly(RELAY, sender, metrics);
      sim = opened.sim;
      channel = opened.channel;
      lanes = opened.lanes;
    }

    /** Errors inside the relay since this connection opened. */
    double internalErrors() {
      return internalErrorsSoFar() - internalErrorsBefore;
    }

    @Override
    public void close() {
      channel.close();
      sim.advance(Duration.ofSeconds(10));
      lanes.close();
      sim.runDue();
      assertTrue(sender.releasedBodies().isEmpty(), "no released body sent downstream");
      assertFalse(channel.finishAndReleaseAll(), "nothing left unread or unreleased");
      // The embedded channel runs on this thread, which would keep each execution's per-loop
      // resources (a router, a zstd context) in its thread-locals: a long run ran out of heap.
      FastThreadLocal.removeAll();
    }
  }

  @FuzzTest(maxDuration = "4m")
  void rawConnectionBytesGetOnlySenderErrorsAndLeakNothing(byte[] data) throws IOException {
    try (Connection c = new Connection(true)) {
      // Arrives in pieces, as from a socket, until the relay closes the connection.
      for (int at = 0; at < data.length && c.channel.isOpen(); at += 700) {
        c.channel.writeInbound(Unpooled.wrappedBuffer(data, at, Math.min(700, data.length - at)));
        c.sim.runDue();
      }
      c.sim.advance(Duration.ofSeconds(5));
      StringBuilder out = new StringBuilder();
      for (Object o; (o = c.channel.readOutbound()) != null; ) {
        ByteBuf b = (ByteBuf) o;
        out.append(b.toString(StandardCharsets.ISO_8859_1));
        b.release();
      }
      Matcher m = STATUS.matcher(out);
      while (m.find()) {
        int status = Integer.parseInt(m.group(1));
        assertTrue(status < 500, () -> "the relay answered " + status + ":\n" + out);
      }
      assertEquals(0, c.internalErrors(), () -> "an error inside the relay:\n" + out);
    }
  }

  @FuzzTest(maxDuration = "4m")
  void writeBodyIsDeliveredExactlyPerTenantOrRejected(byte[] data) throws Exception {
    try (Connection c = new Connection(false)) {
      FullHttpRequest req = TestRequests.write(Snappy.compress(data));
      c.channel.writeInbound(req);
      c.sim.advance(Duration.ofSeconds(5));
      FullHttpResponse r = c.channel.readOutbound();
      int status = r.status().code();
      String body = r.content().toString(StandardCharsets.UTF_8);
      r.release();
      assertEquals(0, c.internalErrors(), body);
      if (status == 400) {
        assertTrue(
            body.startsWith("malformed request at byte ")
                || body.startsWith("cannot decompress the snappy body: "),
            body);
        assertTrue(c.sender.calls().isEmpty(), "nothing sent for a rejected request");
        return;
      }
      assertEquals(204, status, body);
      WriteRequest request = FuzzInputs.parseV1(data);
      if (request == null) {
        return;
      }
      TenantRules rules = RELAY.tenant().rules();
      Map<TenantProblem, Integer> problems = new EnumMap<>(TenantProblem.class);
      Map<String, WriteRequest> expected = Oracle.expectedBatches(request, rules, problems);
      Map<String, WriteRequest.Builder> delivered = new LinkedHashMap<>();
      for (ScriptedSender.Call call : c.sender.calls()) {
        WriteRequest part = WriteRequest.parseFrom(call.body());
        delivered.computeIfAbsent(call.tenant(), t -> WriteRequest.newBuilder()).mergeFrom(part);
      }
      assertEquals(new ArrayList<>(expected.keySet()), new ArrayList<>(delivered.keySet()));
      for (Map.Entry<String, WriteRequest.Builder> e : delivered.entrySet()) {
        WriteRequest want = expected.get(e.getKey());
        if (want == null) {
          fail("delivered to a tenant the oracle does not know: " + e.getKey());
        }
        assertEquals(
            want.getTimeseriesList(),
            e.getValue().build().getTimeseriesList(),
            "series of " + e.getKey());
      }
    }
  }
}
