package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.server.testing.Scrape;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The parts of Mimir's dialect the relay speaks, against a scripted downstream that answers as
 * Mimir does (it/MimirDialectTest shows each answer on a real Mimir): {@code Retry-Attempt} on
 * every retry of a batch, counting the sender's own retries; {@code 202} as a success; and a {@code
 * Retry-After} of 6 s or more, which is the throttled tenant's and not passed on to a sender whose
 * other tenants were delivered.
 */
class MimirDialectRelayTest {
  private static byte[] request(String... tenants) {
    WriteRequestEncoder e = new WriteRequestEncoder();
    long now = System.currentTimeMillis();
    for (String t : tenants) {
      e.beginSeries().label("__name__", "up").label("service_id", t).sample(1, now).endSeries();
    }
    return e.toByteArray();
  }

  /** One series {@code <name>{service_id="<tenant>"}}. */
  private static byte[] series(String tenant, String name) {
    return new WriteRequestEncoder()
        .beginSeries()
        .label("__name__", name)
        .label("service_id", tenant)
        .sample(1, System.currentTimeMillis())
        .endSeries()
        .toByteArray();
  }

  private static List<String> retryAttempts(RelayFixture relay, String tenant) {
    return relay.downstream.received().stream()
        .filter(r -> tenant.equals(r.tenant()))
        .map(r -> String.valueOf(r.header("Retry-Attempt")))
        .toList();
  }

  @Test
  void aFirstSendCarriesNoRetryAttemptAndEachRetryOfTheBatchCountsIt() throws Exception {
    try (RelayFixture relay = new RelayFixture()) {
      relay.downstream.script("a", Reply.status(503), Reply.status(500), Reply.status(200));

      HttpResponse<String> r = relay.write(request("a"));

      assertEquals(204, r.statusCode(), r.body());
      assertEquals(List.of("null", "1", "2"), retryAttempts(relay, "a"));
    }
  }

  @Test
  void theSendersRetryAttemptIsPassedOnAndTheRelaysRetriesAddToIt() throws Exception {
    try (RelayFixture relay = new RelayFixture()) {
      relay.downstream.script("a", Reply.status(503), Reply.status(200));

      HttpResponse<String> r = relay.write(request("a", "b"), "Retry-Attempt", "3");
      HttpResponse<String> nonsense = relay.write(request("c"), "Retry-Attempt", "-1");

      assertEquals(204, r.statusCode(), r.body());
      assertEquals(List.of("3", "4"), retryAttempts(relay, "a"));
      assertEquals(List.of("3"), retryAttempts(relay, "b"));
      assertEquals(204, nonsense.statusCode(), nonsense.body());
      assertEquals(List.of("null"), retryAttempts(relay, "c"), "not a count: not passed on");
    }
  }

  /** Mimir answers 202 to a push it dropped as the standby HA replica's: delivered, not retried. */
  @Test
  void accepted202IsDeliveredAndNotSentAgain() throws Exception {
    try (RelayFixture relay = new RelayFixture()) {
      relay.downstream.script("a", Reply.status(202, ""));

      HttpResponse<String> r = relay.write(request("a"));

      assertEquals(204, r.statusCode(), r.body());
      assertEquals(1, relay.downstream.received().size());
    }
  }

  /**
   * Mimir's 429 carries {@code Retry-After: 6} (or more): the relay's lane keeps it, and the sender
   * of a request whose other tenant was delivered is not told to wait; its retry is answered at
   * once, without a downstream request, and under the default policy that answer is 400.
   */
  @Test
  void aThrottledTenantsRetryAfterIsKeptByItsLaneAndNotPassedToASenderWithDeliveredTenants()
      throws Exception {
    try (RelayFixture relay = new RelayFixture()) {
      relay.downstream.script(
          "throttled",
          new Reply(
              429,
              Map.of("Retry-After", "6"),
              "the request has been rejected because the tenant exceeded the ingestion rate limit"
                  + " (err-mimir-tenant-max-ingestion-rate)",
              java.time.Duration.ZERO,
              false));
      byte[] body = request("healthy", "throttled");

      HttpResponse<String> first = relay.write(body);
      HttpResponse<String> retry = relay.write(body, "Retry-Attempt", "1");
      HttpResponse<String> alone = relay.write(request("throttled"));

      assertEquals(429, first.statusCode(), first.body());
      assertTrue(first.headers().firstValue("Retry-After").isEmpty(), "no Retry-After");
      assertTrue(first.body().contains("err-mimir-tenant-max-ingestion-rate"), first.body());
      assertEquals(400, retry.statusCode(), retry.body());
      assertEquals(429, alone.statusCode(), alone.body());
      long left = Long.parseLong(alone.headers().firstValue("Retry-After").orElseThrow());
      assertTrue(left >= 5 && left <= 6, "the time left of the downstream's delay: " + left);
      List<Received> received = relay.downstream.received();
      assertEquals(
          List.of("healthy", "throttled"),
          received.stream().map(Received::tenant).sorted().toList(),
          "one send each: the retry skipped the delivered tenant, the lane held the other");
      assertNull(received.get(0).header("Retry-Attempt"));
    }
  }

  /**
   * Mimir answers a push that takes its tenant over {@code max_global_series_per_user} 400 and
   * writes the rest of it: a merged request of several senders' batches answered so is answered 400
   * to each of them, once, and not sent again in halves (which would find no bad batch).
   */
  @Test
  void aMergedRequestOverTheTenantsSeriesLimitIsAnsweredOnceAndNotSplit() throws Exception {
    try (RelayFixture relay = new RelayFixture(Map.of("relay.lanes.max-concurrent-sends", "1"))) {
      String limit =
          "send data to ingesters: failed pushing to ingester: user=limited: per-user series limit"
              + " of 3 exceeded (err-mimir-max-series-per-user). To adjust the related per-tenant"
              + " limit, configure -ingester.max-global-series-per-user";
      relay.downstream.script(
          "limited", Reply.slow(java.time.Duration.ofMillis(500)), Reply.status(400, limit));
      var first = relay.writeAsync(series("limited", "m0"));
      assertTrue(
          Await.within(
              java.time.Duration.ofSeconds(5), () -> relay.downstream.received().size() == 1));
      List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> merged =
          List.of(
              relay.writeAsync(series("limited", "m1")),
              relay.writeAsync(series("limited", "m2")),
              relay.writeAsync(series("limited", "m3")));

      assertEquals(204, first.get().statusCode());
      for (var f : merged) {
        HttpResponse<String> r = f.get();
        assertEquals(400, r.statusCode(), r.body());
        assertTrue(r.body().contains("per-user series limit of 3 exceeded"), r.body());
      }
      assertEquals(2, relay.downstream.received().size(), "the merged request, once");
      assertEquals(
          2,
          Scrape.sum(
              relay.get("/metrics").body(),
              "relay_tenant_coalesced_fragments_total",
              Map.of("tenant", "limited")),
          "two batches travelled in the third's request");
    }
  }
}
