package io.prwrelay.server.downstream;

import static io.prwrelay.testkit.ScriptedDownstream.Reply;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.core.route.TenantProblem;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.oracle.v1.WriteRequest;
import io.prwrelay.server.testing.ForwardedRequests;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.Oracle;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testing.RequestGenerator;
import io.prwrelay.testkit.ScriptedDownstream.Received;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Base64;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The shared downstream suite: the relay and its pooled HTTP client in front of a real in-process
 * HTTP server that records requests and plays scripted answers. Asserts the HTTP exchange: exact
 * per-tenant bodies (decoded with the oracle), headers, URL, credentials, connection failures, and
 * the sender's status. Delivery decisions over time are in {@link DeliveryTest}.
 */
class DownstreamClientTest {
  private static final TenantRules DEFAULT_RULES = TenantRules.builder().build();

  private static byte[] series(String tenant, String name) {
    return tenant == null
        ? RawProto.series(RawProto.label("__name__", name), RawProto.sample(1, 1))
        : RawProto.series(
            RawProto.label("__name__", name),
            RawProto.label("service_id", tenant),
            RawProto.sample(1, 1));
  }

  private static byte[] twoTenants() {
    return RawProto.cat(series("a", "m1"), series("b", "m2"), series("a", "m3"));
  }

  @Test
  void eachTenantReceivesExactlyItsSeriesWithTheRequiredHeaders() throws Exception {
    RequestGenerator gen = new RequestGenerator(11);
    WriteRequest request = gen.request(2000, DEFAULT_RULES.labels());
    Map<String, WriteRequest> expected =
        Oracle.expectedBatches(request, DEFAULT_RULES, new EnumMap<>(TenantProblem.class));
    // 2000 series under paranoid leak tracking: on a busy machine an attempt may take longer than
    // the fixture's 1 s and be sent again, which this test, about what one attempt carries, is not
    // about.
    try (RelayFixture f =
        new RelayFixture(
            Map.of("relay.downstream.attempt-timeout", "20s", "relay.downstream.timeout", "30s"))) {
      HttpResponse<String> r = f.write(request.toByteArray());
      assertEquals(204, r.statusCode(), r.body());
      Map<String, List<Received>> got = f.downstream.byTenant();
      assertEquals(expected.keySet(), got.keySet());
      for (Map.Entry<String, WriteRequest> e : expected.entrySet()) {
        List<Received> forTenant = got.get(e.getKey());
        assertEquals(1, forTenant.size(), "one POST per tenant");
        Received rec = forTenant.get(0);
        assertArrayEquals(e.getValue().toByteArray(), rec.body(), "batch of " + e.getKey());
        ForwardedRequests.assertPrw1Push(rec);
        assertNull(rec.header("Authorization"));
      }
    }
  }

  @Test
  void cortexStyle200AndPlain204BothCountAsAccepted() throws Exception {
    try (RelayFixture f = new RelayFixture()) {
      f.downstream.script("a", Reply.status(200)).script("b", Reply.status(204));
      assertEquals(204, f.write(twoTenants()).statusCode());
    }
  }

  @Test
  void nonRetriableRejectionIs400NamingTheTenantAndTheDownstreamMessage() throws Exception {
    for (int status : new int[] {400, 401, 413, 415}) {
      try (RelayFixture f = new RelayFixture()) {
        f.downstream.script("b", Reply.status(status, "err: sample too old"));
        HttpResponse<String> r = f.write(twoTenants());
        assertEquals(400, r.statusCode(), r.body());
        assertTrue(r.body().contains("tenant b"), r.body());
        assertTrue(
            r.body().contains("downstream answered " + status + ": err: sample too old"), r.body());
        assertFalse(r.body().contains("tenant a"), r.body());
        assertEquals(1, f.downstream.byTenant().get("b").size(), "a 4xx is not retried");
        assertEquals(1, f.downstream.byTenant().get("a").size());
      }
    }
  }

  @Test
  void serverErrorIsRetriedUntilAccepted() throws Exception {
    try (RelayFixture f = new RelayFixture()) {
      f.downstream.script("a", Reply.status(500), Reply.status(503));
      HttpResponse<String> r = f.write(twoTenants());
      assertEquals(204, r.statusCode(), r.body());
      List<Received> attempts = f.downstream.byTenant().get("a");
      assertEquals(3, attempts.size());
      assertArrayEquals(
          attempts.get(0).body(), attempts.get(2).body(), "a retry re-sends the same batch");
      assertEquals(1, f.downstream.byTenant().get("b").size());
    }
  }

  @Test
  void retryAfterOfThe429IsPassedOnToTheSender() throws Exception {
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.timeout", "2s"))) {
      f.downstream.script("a", Reply.retryAfter(429, "30"));
      f.downstream.script("b", Reply.retryAfter(429, "7"));
      HttpResponse<String> r = f.write(twoTenants());
      assertEquals(429, r.statusCode(), r.body());
      assertEquals("30", r.headers().firstValue("Retry-After").orElse(null));
      assertEquals(
          1,
          f.downstream.byTenant().get("a").size(),
          "no retry when Retry-After exceeds the deadline");
    }
  }

  @Test
  void slowDownstreamIsTimedOutAndRetried() throws Exception {
    try (RelayFixture f =
        new RelayFixture(
            Map.of(
                "relay.downstream.attempt-timeout", "200ms", "relay.downstream.timeout", "3s"))) {
      f.downstream.script("a", Reply.slow(Duration.ofSeconds(2)));
      HttpResponse<String> r = f.write(twoTenants());
      assertEquals(204, r.statusCode(), r.body());
      assertEquals(2, f.downstream.byTenant().get("a").size());
    }
  }

  @Test
  void connectionResetIsRetried() throws Exception {
    try (RelayFixture f = new RelayFixture()) {
      f.downstream.script("b", Reply.reset(), Reply.reset());
      HttpResponse<String> r = f.write(twoTenants());
      assertEquals(204, r.statusCode(), r.body());
      assertEquals(3, f.downstream.byTenant().get("b").size());
    }
  }

  @Test
  void unreachableDownstreamIs503() throws Exception {
    int closedPort;
    try (java.net.ServerSocket s =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    try (RelayFixture f =
        new RelayFixture(
            Map.of(
                "relay.downstream.url",
                "http://127.0.0.1:" + closedPort + "/api/v1/push",
                "relay.downstream.timeout",
                "400ms"))) {
      HttpResponse<String> r = f.write(twoTenants());
      assertEquals(503, r.statusCode(), r.body());
      assertTrue(r.body().contains("cannot connect"), r.body());
    }
  }

  @Test
  void tenantIsSubstitutedIntoTheUrlAndCustomHeaderIsUsed() throws Exception {
    try (RelayFixture f =
        new RelayFixture(
            Map.of(
                "relay.downstream.url", "http://$DOWNSTREAM/t/{tenant}/push",
                "relay.downstream.tenant-header", "X-Tenant"))) {
      f.downstream.tenantHeader("X-Tenant");
      assertEquals(204, f.write(twoTenants()).statusCode());
      assertEquals("/t/a/push", f.downstream.byTenant().get("a").get(0).uri());
      assertEquals("/t/b/push", f.downstream.byTenant().get("b").get(0).uri());
      assertNull(f.downstream.byTenant().get("a").get(0).header("X-Scope-OrgID"));
    }
  }

  @Test
  void sendsBasicAuthOrBearerToken() throws Exception {
    try (RelayFixture f =
        new RelayFixture(
            Map.of(
                "relay.downstream.basic-auth.username", "relay",
                "relay.downstream.basic-auth.password", "s3cret"))) {
      f.write(twoTenants());
      String expected =
          "Basic "
              + Base64.getEncoder()
                  .encodeToString("relay:s3cret".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      assertEquals(expected, f.downstream.received().get(0).header("Authorization"));
    }
    try (RelayFixture f = new RelayFixture(Map.of("relay.downstream.bearer-token", "tok"))) {
      f.write(twoTenants());
      assertEquals("Bearer tok", f.downstream.received().get(0).header("Authorization"));
    }
  }

  @Test
  void incomingTenantHeaderIsIgnoredUnlessTrusted() throws Exception {
    try (RelayFixture f = new RelayFixture()) {
      assertEquals(204, f.write(twoTenants(), "X-Scope-OrgID", "intruder").statusCode());
      assertEquals(Set.of("a", "b"), f.downstream.byTenant().keySet());
    }
    try (RelayFixture f = new RelayFixture(Map.of("relay.tenant.trust-incoming-header", "true"))) {
      assertEquals(204, f.write(twoTenants(), "X-Scope-OrgID", "team-x").statusCode());
      assertEquals(List.of("team-x"), List.copyOf(f.downstream.byTenant().keySet()));
      assertArrayEquals(twoTenants(), f.downstream.received().get(0).body());
      HttpResponse<String> bad = f.write(twoTenants(), "X-Scope-OrgID", "a|b");
      assertEquals(400, bad.statusCode());
      assertEquals(204, f.write(twoTenants()).statusCode(), "without the header, series are split");
    }
  }
}
