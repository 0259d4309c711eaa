package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.it.MiniJson;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.testing.RawProto;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

/**
 * {@code GET /tenants} and {@code GET /api/v1/tenants} through the ingress handler: what a write
 * routed shows up as, content types, escaping of a tenant ID with {@code '}, {@code (} and {@code
 * *}, the credentials of {@code /metrics} under {@code relay.server.auth.protect-metrics}, and 404
 * naming the key when the insight is off.
 */
class TenantsEndpointTest {
  private static final String ODD = "a'b(c)*";

  private final ScriptedSender sender = new ScriptedSender();
  private final List<EmbeddedChannel> channels = new ArrayList<>();
  private IngressFixture fixture;
  private EmbeddedChannel channel;

  private void open(Map<String, String> config) throws Exception {
    fixture =
        IngressFixture.handlerOnly(
            IngressFixture.config(Map.of(), config),
            sender,
            new RelayMetrics(10, ByteBufAllocator.DEFAULT));
    channel = fixture.channel;
    channels.add(channel);
  }

  /** A new connection to the same ingress: a 401 closes the one it answers. */
  private void reconnect() {
    channel = new EmbeddedChannel(fixture.ingress.newHandler());
    channels.add(channel);
  }

  @AfterEach
  void tearDown() {
    fixture.lanes.close();
    assertTrue(sender.releasedBodies().isEmpty());
    for (EmbeddedChannel c : channels) {
      assertFalse(c.finishAndReleaseAll(), "nothing left unread or unreleased");
    }
  }

  private FullHttpResponse exchange(FullHttpRequest req) {
    channel.writeInbound(req);
    fixture.sim.runDue();
    return channel.readOutbound();
  }

  private static FullHttpRequest request(HttpMethod method, String path, String... headers) {
    return TestRequests.request(method, path, new byte[0], headers);
  }

  /** Status, content type and body of the answer to {@code req}; the answer is released. */
  private String[] answer(FullHttpRequest req) {
    FullHttpResponse r = exchange(req);
    try {
      return new String[] {
        Integer.toString(r.status().code()),
        String.valueOf(r.headers().get(HttpHeaderNames.CONTENT_TYPE)),
        r.content().toString(StandardCharsets.UTF_8)
      };
    } finally {
      r.release();
    }
  }

  private void writeTwoTenants(String... headers) throws Exception {
    byte[] body =
        Snappy.compress(
            RawProto.cat(
                RawProto.series(
                    RawProto.label("__name__", "up"),
                    RawProto.label("service_id", ODD),
                    RawProto.sample(1, 1)),
                RawProto.series(
                    RawProto.label("__name__", "up"),
                    RawProto.label("service_id", "b"),
                    RawProto.sample(1, 1))));
    assertEquals("204", answer(TestRequests.write(body, headers))[0]);
  }

  @Test
  void aRoutedRequestShowsUpOnThePageAndInTheApi() throws Exception {
    open(Map.of());
    writeTwoTenants();
    String[] api = answer(request(HttpMethod.GET, "/api/v1/tenants"));
    assertEquals("200", api[0]);
    assertEquals("application/json", api[1]);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> tenants =
        (List<Map<String, Object>>) ((Map<String, Object>) MiniJson.parse(api[2])).get("tenants");
    assertEquals(List.of(ODD, "b"), tenants.stream().map(t -> t.get("tenant")).sorted().toList());
    for (Map<String, Object> t : tenants) {
      assertEquals(1.0, t.get("active_series_estimate"));
    }
    String[] page = answer(request(HttpMethod.GET, "/tenants"));
    assertEquals("200", page[0]);
    assertEquals("text/html; charset=utf-8", page[1]);
    assertTrue(page[2].contains("<tr data-tenant=\"a&#39;b(c)*\">"), page[2]);
    assertFalse(page[2].contains(ODD), "the raw tenant ID never reaches the HTML");
    String[] head = answer(request(HttpMethod.HEAD, "/tenants"));
    assertEquals(List.of("200", "text/html; charset=utf-8", ""), List.of(head));
    assertEquals("405", answer(request(HttpMethod.POST, "/api/v1/tenants"))[0]);
  }

  @Test
  void protectMetricsAsksTheWritersCredentialsForTheTenantPagesToo() throws Exception {
    open(Map.of("relay.server.bearer-token", "tok", "relay.server.auth.protect-metrics", "true"));
    writeTwoTenants("Authorization", "Bearer tok");
    for (String path : List.of("/tenants", "/api/v1/tenants", "/metrics")) {
      assertEquals("401", answer(request(HttpMethod.GET, path))[0], path);
      reconnect();
      assertEquals("401", answer(request(HttpMethod.GET, path, "Authorization", "Bearer x"))[0]);
      reconnect();
      assertEquals(
          "200", answer(request(HttpMethod.GET, path, "Authorization", "Bearer tok"))[0], path);
    }
    assertEquals("200", answer(request(HttpMethod.GET, "/-/healthy"))[0]);
  }

  @Test
  void withTheInsightOffBothAnswer404NamingTheKey() throws Exception {
    open(Map.of("relay.insight.enabled", "false"));
    writeTwoTenants();
    for (String path : List.of("/tenants", "/api/v1/tenants")) {
      String[] a = answer(request(HttpMethod.GET, path));
      assertEquals("404", a[0]);
      assertEquals("the tenant insight is off (relay.insight.enabled=false)\n", a[2]);
    }
  }
}
