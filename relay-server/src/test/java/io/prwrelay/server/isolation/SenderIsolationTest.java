package io.prwrelay.server.isolation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.oracle.v1.Label;
import io.prwrelay.oracle.v1.MetricMetadata;
import io.prwrelay.oracle.v1.Sample;
import io.prwrelay.oracle.v1.TimeSeries;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoublePredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * Senders that share the relay, each from its own loopback address (127.0.0.1 the innocent one,
 * 127.0.0.2 and 127.0.0.3 the others), against the relay as a process in a small container's JVM
 * ({@link RelayProcess#SMALL_CONTAINER}): what one sender does to the state the relay keeps about
 * senders (the memory budget, the metric families that route metadata, the ledgers of retried
 * bodies) never fails or alters another's writes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SenderIsolationTest {
  private static final Duration START = Duration.ofSeconds(60);
  private static final String INNOCENT = "127.0.0.1";
  private static final String OTHER = "127.0.0.2";
  private static final String THIRD = "127.0.0.3";
  private static final int MIB = 1 << 20;

  @TempDir Path dir;

  private static RelayProcess start(Path dir, ScriptedDownstream down, String... overrides)
      throws Exception {
    Map<String, String> config = new HashMap<>();
    config.put("relay.downstream.url", down.url());
    config.put("relay.server.io-threads", "2");
    for (int i = 0; i < overrides.length; i += 2) {
      config.put(overrides[i], overrides[i + 1]);
    }
    return RelayProcess.start(dir, config, RelayProcess.SMALL_CONTAINER).awaitListening(START);
  }

  // ---- the memory budget

  @Test
  void twoSendersDeclaringTheirWholeShareAndSendingNothingHoldOnlyAFirstBuffer() throws Exception {
    try (ScriptedDownstream down = new ScriptedDownstream();
        RelayProcess relay =
            start(
                dir,
                down,
                "relay.server.max-request-bytes",
                Integer.toString(4 * MIB),
                "relay.server.max-inflight-bytes",
                Integer.toString(8 * MIB))) {
      // Each declares its whole share (auto: half the budget) and stalls: before, the two held the
      // whole budget for the read timeout (30 s) and every other sender got 503.
      try (From other = new From(OTHER, relay.address());
          From third = new From(THIRD, relay.address())) {
        long start = System.nanoTime();
        other.head(4 * MIB);
        third.head(4 * MIB);
        // Both heads admitted: what they hold is checked once the innocent sender is done.
        double held = awaitMetric(relay, "relay_inflight_body_bytes", v -> v >= 2 * 64 * 1024);

        try (From innocent = new From(INNOCENT, relay.address())) {
          for (int i = 0; i < 20; i++) {
            Answer a = innocent.post(seriesRequest(series("up", "innocent-t", i)));
            assertEquals(204, a.status(), "write " + i + ": " + a.body());
          }
        }
        assertEquals(20, down.byTenant().get("innocent-t").size());
        assertEquals(2 * 64 * 1024, held, "each declaration held its first buffer only");

        for (From stalled : List.of(other, third)) {
          Answer a = stalled.read();
          assertEquals(408, a.status(), a.body());
          assertEquals(
              "request body stalled: no bytes of it within"
                  + " relay.server.body-stall-timeout=PT10S",
              a.body());
        }
        long waited = System.nanoTime() - start;
        assertTrue(
            waited < TimeUnit.SECONDS.toNanos(20),
            "408 after the stall timeout (10 s), not the read timeout (30 s): "
                + TimeUnit.NANOSECONDS.toMillis(waited)
                + " ms");
        awaitMetric(relay, "relay_inflight_body_bytes", v -> v == 0);
      }
      assertTrue(relay.isAlive(), relay.log());
    }
  }

  // ---- metadata-only requests

  @Test
  void aSendersMetadataGoesOnlyToItsOwnTenantsWhileAnotherSendersTenantIsThrottled()
      throws Exception {
    try (ScriptedDownstream down = new ScriptedDownstream()) {
      down.rule("attacker-t", () -> Reply.status(429, "ingestion rate limit exceeded"));
      try (RelayProcess relay = start(dir, down);
          From innocent = new From(INNOCENT, relay.address());
          From attacker = new From(OTHER, relay.address())) {
        assertEquals(429, attacker.post(seriesRequest(series("up", "attacker-t", 1))).status());
        assertEquals(204, innocent.post(seriesRequest(series("up", "innocent-t", 1))).status());

        // Before, the innocent's metadata of up went to attacker-t too: 429, then 400 (its repeat
        // of a throttled body dropped), and its help text was written into attacker-t.
        for (int i = 0; i < 3; i++) {
          Answer a = innocent.post(metadataRequest("up", "Innocent's up."));
          assertEquals(204, a.status(), "metadata request " + i + ": " + a.body());
        }
        Answer own = attacker.post(metadataRequest("up", "Attacker's up."));
        assertEquals(429, own.status(), "the attacker's metadata meets its own tenant: " + own);

        Map<String, List<String>> help = helpByTenant(down.received());
        assertEquals(
            Map.of(
                "innocent-t",
                List.of("Innocent's up.", "Innocent's up.", "Innocent's up."),
                "attacker-t",
                List.of("Attacker's up.")),
            help);
      }
    }
  }

  // ---- the ledgers of retried bodies

  @Test
  void aByteIdenticalBodyOfAnotherSenderIsItsOwnWhileRetriesStillSkipDeliveredTenants()
      throws Exception {
    try (ScriptedDownstream down = new ScriptedDownstream()) {
      AtomicReference<Reply> b = new AtomicReference<>(Reply.status(429, "rate limited"));
      down.rule("b", b::get);
      try (RelayProcess relay = start(dir, down);
          From first = new From(OTHER, relay.address());
          From second = new From(THIRD, relay.address())) {
        byte[] body = seriesRequest(series("up", "a", 7), series("up", "b", 7));

        // Tenant a is always answered 200; b 429 until it is set healthy.
        assertEquals(429, first.post(body).status());
        assertEquals(1, received(down, "a"));

        // Before, the second sender's first attempt of the same bytes was answered 400 (the first
        // sender's 429 counted for it) and its tenant a was skipped, delivered by another sender.
        Answer another = second.post(body);
        assertEquals(429, another.status(), another.body());
        assertEquals(2, received(down, "a"), "the second sender's a is its own");

        Answer dropped = first.post(body);
        assertEquals(400, dropped.status(), "the first sender's repeat: " + dropped.body());
        assertEquals(2, received(down, "a"), "its retry skipped a, delivered by its first try");

        b.set(null);
        int throttled = received(down, "b");
        assertEquals(3, throttled, "b was tried by every attempt");
        assertEquals(204, second.post(body).status());
        assertEquals(2, received(down, "a"), "the second sender's retry skipped a");
        assertEquals(throttled + 1, received(down, "b"));
      }
    }
  }

  // ---- helpers

  /** Requests of {@code tenant} the downstream received. */
  private static int received(ScriptedDownstream down, String tenant) {
    return down.byTenant().getOrDefault(tenant, List.of()).size();
  }

  /** The help texts of the metadata each tenant received, in order. */
  private static Map<String, List<String>> helpByTenant(List<Received> received) throws Exception {
    Map<String, List<String>> out = new HashMap<>();
    for (Received r : received) {
      for (MetricMetadata m : WriteRequest.parseFrom(r.body()).getMetadataList()) {
        out.computeIfAbsent(r.tenant(), t -> new ArrayList<>()).add(m.getHelp());
      }
    }
    return out;
  }

  private static TimeSeries series(String name, String tenant, long value) {
    return TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addLabels(Label.newBuilder().setName("service_id").setValue(tenant))
        .addSamples(Sample.newBuilder().setValue(value).setTimestamp(1_700_000_000_000L))
        .build();
  }

  private static byte[] seriesRequest(TimeSeries... series) {
    return WriteRequest.newBuilder().addAllTimeseries(List.of(series)).build().toByteArray();
  }

  private static byte[] metadataRequest(String family, String help) {
    return WriteRequest.newBuilder()
        .addMetadata(
            MetricMetadata.newBuilder()
                .setType(MetricMetadata.MetricType.GAUGE)
                .setMetricFamilyName(family)
                .setHelp(help))
        .build()
        .toByteArray();
  }

  /**
   * Waits until the relay's {@code /metrics} shows {@code series} at a value {@code wanted}
   * accepts, and returns that value.
   */
  private static double awaitMetric(RelayProcess relay, String series, DoublePredicate wanted)
      throws Exception {
    double[] last = {Double.NaN};
    if (!Await.within(
        Duration.ofSeconds(10), () -> wanted.test(last[0] = scraped(relay, series)))) {
      throw new AssertionError(series + " never as wanted; last " + last[0]);
    }
    return last[0];
  }

  /** {@code series} in the relay's {@code /metrics} now; NaN while it is not there. */
  private static double scraped(RelayProcess relay, String series) {
    try (From probe = new From(INNOCENT, relay.address())) {
      return Scrape.valueOr(probe.get("/metrics").body(), series, Double.NaN);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** An answer: status and body. */
  private record Answer(int status, String body) {}

  /** A sender's HTTP/1.1 keep-alive connection to the relay from its own loopback address. */
  private static final class From implements AutoCloseable {
    private final Socket socket = new Socket();
    private final OutputStream out;
    private final InputStream in;

    From(String source, InetSocketAddress relay) throws IOException {
      socket.bind(new InetSocketAddress(InetAddress.getByName(source), 0));
      socket.connect(relay, 5_000);
      socket.setSoTimeout(30_000);
      out = socket.getOutputStream();
      in = socket.getInputStream();
    }

    /** POSTs {@code request} snappy-compressed, as Prometheus does, and reads the answer. */
    Answer post(byte[] request) throws IOException {
      byte[] body = Snappy.compress(request);
      head(body.length);
      out.write(body);
      out.flush();
      return read();
    }

    /** Sends only the head of a write request declaring {@code length} body bytes. */
    void head(int length) throws IOException {
      out.write(
          ("POST /api/v1/write HTTP/1.1\r\nHost: relay\r\nContent-Type: application/x-protobuf\r\n"
                  + "Content-Encoding: snappy\r\nX-Prometheus-Remote-Write-Version: 0.1.0\r\n"
                  + "Content-Length: "
                  + length
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
    }

    Answer get(String path) throws IOException {
      out.write(
          ("GET " + path + " HTTP/1.1\r\nHost: relay\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      return read();
    }

    /** Reads one answer: status line, headers, and a body of {@code Content-Length} bytes. */
    Answer read() throws IOException {
      String status = line();
      int length = 0;
      for (String h = line(); !h.isEmpty(); h = line()) {
        if (h.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
          length = Integer.parseInt(h.substring(15).trim());
        }
      }
      String body = new String(in.readNBytes(length), StandardCharsets.UTF_8).strip();
      return new Answer(Integer.parseInt(status.split(" ")[1]), body);
    }

    private String line() throws IOException {
      StringBuilder b = new StringBuilder();
      for (int c = in.read(); c != '\n'; c = in.read()) {
        if (c < 0) {
          throw new IOException("connection ended inside an answer: " + b);
        }
        if (c != '\r') {
          b.append((char) c);
        }
      }
      return b.toString();
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
