package io.prwrelay.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.app.RelayServer;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.testkit.ScriptedDownstream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The generator run in-process against an in-process relay that delivers to the sink. Each test has
 * its own relay and sink, and checks counts and statuses, not times: the tests run at the same
 * time, most of them waiting for a duration, a rate or a {@code Retry-After}.
 */
@Execution(ExecutionMode.CONCURRENT)
class LoadGeneratorTest {
  private ScriptedDownstream sink;
  private RelayServer relay;
  private final ByteArrayOutputStream output = new ByteArrayOutputStream();

  @BeforeEach
  void startSink() throws Exception {
    sink = ScriptedDownstream.counting(0, 1);
  }

  @AfterEach
  void stop() throws Exception {
    if (relay != null) {
      relay.shutdown(Duration.ofSeconds(5));
    }
    sink.close();
  }

  private void startRelay(Map<String, String> extra) throws Exception {
    Map<String, String> config = new HashMap<>(extra);
    config.put("relay.server.host", "127.0.0.1");
    config.put("relay.server.port", "0");
    config.putIfAbsent("relay.server.io-threads", "1");
    config.put("relay.downstream.url", sink.url());
    relay = new RelayServer(RelayConfig.load(null, config, Map.of()));
    relay.start();
  }

  /** Runs the generator with {@code args} (space-separated) against the relay. */
  private Summary run(String args) throws Exception {
    String url = "http://127.0.0.1:" + relay.address().getPort() + "/api/v1/write";
    List<String> all = new ArrayList<>(List.of("--relay-url", url));
    all.addAll(List.of(args.split(" ")));
    if (!all.contains("--codec-floor")) {
      all.addAll(List.of("--codec-floor", "0s"));
    }
    Options options = Options.parse(all.toArray(String[]::new));
    return LoadGenerator.run(options, sink, new PrintStream(output, true, StandardCharsets.UTF_8));
  }

  private String output() {
    return output.toString(StandardCharsets.UTF_8);
  }

  @Test
  void everyTenantReceivesExactlyTheSeriesSentForIt() throws Exception {
    startRelay(Map.of());
    Summary s =
        run(
            "--duration 2s --warmup 300ms --connections 2 --tenants 5"
                + " --series-per-request 300 --pool 8 --codec-floor 100ms");
    assertEquals(0, s.errors(), output());
    assertTrue(s.acceptedRequests() > 0, output());
    assertEquals(
        List.of("tenant-0", "tenant-1", "tenant-2", "tenant-3", "tenant-4"),
        List.copyOf(s.sentPerTenant().keySet()),
        output());
    assertEquals(s.sentPerTenant(), s.receivedPerTenant(), output());
    assertTrue(s.ok(), output());
    assertTrue(output().contains("RESULT: OK"), output());
    assertEquals(Map.of(204, s.statuses().get(204)), s.statuses(), output());
    CodecFloor floor = s.codecFloor().orElseThrow();
    assertEquals(8, floor.bodies(), output());
    assertEquals(8 * 5, floor.batches(), output());
    assertEquals(0, floor.series() % 300, output());
    assertTrue(floor.series() >= 8 * 300, output());
    assertTrue(floor.pacedCpuSecondsPerMillionSeries().isEmpty(), output());
    assertTrue(output().contains("codec floor "), output());
  }

  @Test
  void zstdAtATargetRateWithARequestCap() throws Exception {
    startRelay(Map.of("relay.tenant.labels", "team"));
    Summary s =
        run(
            "--encoding zstd --rate 40 --requests 25 --duration 5s --warmup 0ms --connections 2"
                + " --tenants 3 --series-per-request 100 --labels 3 --tenant-label team"
                + " --codec-floor 200ms");
    assertTrue(s.ok(), output());
    // Paced at the run's rate: a body every 25 ms for 200 ms, each of 100 series.
    CodecFloor floor = s.codecFloor().orElseThrow();
    assertEquals(40.0, floor.rate(), output());
    assertEquals(8 * 100, floor.pacedSeries(), output());
    assertTrue(floor.pacedCpuSecondsPerMillionSeries().isPresent(), output());
    assertEquals(0, floor.whole(), output());
    assertTrue(output().contains("paced at 40 requests/s"), output());
    assertEquals(25, s.acceptedRequests(), output());
    assertEquals(2500, s.series(), output());
    assertEquals(s.sentPerTenant(), s.receivedPerTenant(), output());
  }

  @Test
  void aRelayThatRenamesTenantsIsAMismatch() throws Exception {
    startRelay(Map.of("relay.tenant.prefix", "x-"));
    Summary s =
        run(
            "--duration 500ms --warmup 0ms --connections 1 --tenants 2"
                + " --series-per-request 50 --pool 2");
    assertEquals(0, s.errors(), output());
    assertTrue(s.mismatch(), output());
    assertFalse(s.ok(), output());
    assertTrue(output().contains("x-tenant-0"), output());
    assertTrue(output().contains("MISMATCH"), output());
    assertTrue(output().contains("RESULT: FAILED"), output());
  }

  /**
   * The throttled-tenant runs below are about retries through the delivery ledger: they keep
   * answering 429 ({@code strict}); the default policy answers 400 after one 429, and the sender
   * drops the request.
   */
  private static final String STRICT_KEY = "relay.delivery.throttled.policy";

  private static final Map<String, String> STRICT = Map.of(STRICT_KEY, "strict");

  /** Four tenants and a bad one throttled (429, no Retry-After) in a quarter of 12 requests. */
  private static final String THROTTLED_RUN =
      "--requests 12 --duration 120s --warmup 0ms --connections 2 --tenants 4"
          + " --series-per-request 200 --pool 8 --bad-tenant 429 --bad-retry-after 0s"
          + " --bad-share 0.25 --retries 2";

  @Test
  void aThrottledTenantsRetriesDeliverEveryOtherTenantExactlyOnce() throws Exception {
    startRelay(STRICT);
    Summary s = run(THROTTLED_RUN);
    assertTrue(s.ok(), output());
    assertEquals(Set.of(204), s.statusesWithoutBad().keySet(), output());
    assertEquals(Set.of(429), s.statusesWithBad().keySet(), output());
    assertTrue(s.retried().getOrDefault(429, 0L) > 0, output());
    assertEquals(
        List.of("tenant-0", "tenant-1", "tenant-2", "tenant-3"),
        List.copyOf(s.sentPerTenant().keySet()),
        output());
    assertEquals(s.sentPerTenant(), s.receivedPerTenant(), output());
    assertTrue(s.relayMetrics().get("relay_ledger_skipped_series_total") > 0, output());
    assertEquals(0, sink.counts().get(BadTenant.TENANT).series(), output());
    assertTrue(output().contains("with tenant-bad:"), output());
  }

  @Test
  void underTheDefaultPolicyAThrottledTenantsRequestsAreDroppedAfterA429AndTheRunIsOk()
      throws Exception {
    startRelay(Map.of());
    Summary s = run(THROTTLED_RUN);
    assertTrue(s.ok(), output());
    assertEquals(Set.of(204), s.statusesWithoutBad().keySet(), output());
    assertEquals(Set.of(429, 400), s.statusesWithBad().keySet(), output());
    assertEquals(s.sentPerTenant(), s.receivedPerTenant(), output());
    assertEquals(0, sink.counts().get(BadTenant.TENANT).series(), output());
  }

  @Test
  void aThrottledTenantAmongLargeBatchesOnTwoEventLoopsCostsNoOtherTenantASeries()
      throws Exception {
    // Two event loops and tenant batches of 16 KiB or more: a healthy tenant's batches routed on
    // the
    // loop that does not hold its lane are sent from there, and every 429 goes back to the lane.
    startRelay(Map.of("relay.server.io-threads", "2", STRICT_KEY, "strict"));
    Summary s =
        run(
            "--requests 40 --duration 120s --warmup 0ms --connections 4 --tenants 4"
                + " --series-per-request 2000 --pool 8 --bad-tenant 429 --bad-retry-after 0s"
                + " --bad-share 0.5 --retries 2");
    assertTrue(s.ok(), output());
    assertEquals(Set.of(204), s.statusesWithoutBad().keySet(), output());
    assertEquals(Set.of(429), s.statusesWithBad().keySet(), output());
    assertEquals(
        List.of("tenant-0", "tenant-1", "tenant-2", "tenant-3"),
        List.copyOf(s.sentPerTenant().keySet()),
        output());
    assertEquals(s.sentPerTenant(), s.receivedPerTenant(), output());
    assertEquals(0, sink.counts().get(BadTenant.TENANT).series(), output());
  }

  @Test
  void manyTenantsPerRequestWithOneThrottledAreDeliveredOnceByASmallLedger() throws Exception {
    // 200 tenants per request, one of them throttled: the ledger keeps one name per failed body,
    // so 50 names cover every retried body of the run.
    startRelay(Map.of("relay.delivery.ledger.max-entries", "50", STRICT_KEY, "strict"));
    Summary s =
        run(
            "--requests 12 --duration 120s --warmup 0ms --connections 2 --tenants 200"
                + " --series-per-request 1000 --pool 8 --bad-tenant 429 --bad-retry-after 0s"
                + " --bad-share 0.5 --retries 2");
    assertTrue(s.ok(), output());
    assertEquals(s.sentPerTenant(), s.receivedPerTenant(), output());
    assertTrue(s.retried().getOrDefault(429, 0L) > 0, output());
    assertTrue(output().contains("tenants not listed, all ok)"), output());
  }

  @Test
  void retriesThatDeliverATenantTwiceAreAMismatch() throws Exception {
    startRelay(Map.of("relay.delivery.ledger.max-entries", "0"));
    // A request count, not a duration: each request that met the bad tenant's 503 is re-sent
    // before the run ends, however long the relay's Retry-After, and its healthy tenants arrive
    // twice.
    Summary s =
        run(
            "--requests 6 --duration 120s --warmup 0ms --connections 2 --tenants 3"
                + " --series-per-request 100 --pool 4 --bad-tenant 503 --bad-retry-after 0s"
                + " --bad-share 0.5 --retries 1");
    assertTrue(s.retried().getOrDefault(503, 0L) > 0, output());
    assertTrue(s.mismatch(), output());
    assertFalse(s.ok(), output());
    assertTrue(output().contains("MISMATCH"), output());
  }

  @Test
  void inQueueModeASlowTenantHoldsNobodyAndArrivesLater(@TempDir Path queue) throws Exception {
    startRelay(
        Map.of("relay.delivery.mode", "queue", "relay.delivery.queue.dir", queue.toString()));
    // Answers held for the slow tenant would time out: the sender gives up after 1.5 s.
    Summary s =
        run(
            "--duration 1s --warmup 0ms --connections 2 --tenants 3 --series-per-request 100"
                + " --pool 4 --bad-tenant slow --bad-delay 2s --bad-share 0.5 --timeout 1500ms");
    assertTrue(s.ok(), output());
    assertEquals(Set.of(204), s.statuses().keySet(), output());
    assertTrue(s.statusesWithBad().get(204) > 0, output());
    assertEquals(s.sentPerTenant(), s.receivedPerTenant(), output());
    awaitEmptyQueue();
    Summary.Tenant bad = s.tenants().stream().filter(Summary.Tenant::bad).findFirst().orElseThrow();
    assertEquals(bad.sent(), sink.counts().get(BadTenant.TENANT).series(), output());
  }

  /** Waits (at most 20 s) until the relay has delivered every queued record. */
  private void awaitEmptyQueue() throws InterruptedException {
    URI url = URI.create("http://127.0.0.1:" + relay.address().getPort() + "/api/v1/write");
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (RelayMetricsScrape.read(url).getOrDefault("relay_queue_bytes", -1.0) != 0
        && System.nanoTime() - until < 0) {
      Thread.sleep(100);
    }
  }

  @Test
  void rejectedRequestsAreErrors() throws Exception {
    startRelay(Map.of("relay.server.max-request-bytes", "100"));
    Summary s =
        run("--duration 500ms --warmup 0ms --connections 1 --series-per-request 50 --pool 2");
    assertTrue(s.errors() > 0, output());
    assertTrue(s.statuses().containsKey(413), output());
    assertEquals(0, s.acceptedRequests(), output());
    assertFalse(s.ok(), output());
  }
}
