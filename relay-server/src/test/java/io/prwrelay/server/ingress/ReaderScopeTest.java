package io.prwrelay.server.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.it.MiniJson;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What each credential reads of {@code /api/v1/tenants}, {@code /tenants} and {@code /metrics}
 * under {@code relay.server.auth.protect-metrics}, over real HTTP: a writer limited to some tenants
 * sees their rows and per-tenant series only (another team's downstream error, which quotes that
 * team's labels, never), a writer of every tenant and the view token see everything, and the view
 * token writes nothing.
 */
class ReaderScopeTest {
  /** A label value only team-b sends; the downstream's error for team-b quotes it. */
  private static final String B_SECRET = "b-secret-host";

  @TempDir Path dir;
  private RelayFixture relay;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    Path tokens = dir.resolve("tokens");
    Files.writeString(tokens, "tok-a team-a\ntok-bc team-b,team-c\ntok-all\n");
    relay =
        new RelayFixture(
            Map.of(
                "relay.server.bearer-token-file", tokens.toString(),
                "relay.server.auth.protect-metrics", "true",
                "relay.server.auth.view-token", "view-secret"),
            d ->
                d.script(
                    "team-b",
                    Reply.status(
                        400, "err-mimir-sample-out-of-order: series {host=\"" + B_SECRET + "\"}")));
    assertEquals(204, write("tok-a", series("team-a", "a-host")).statusCode());
    HttpResponse<String> bc =
        write("tok-bc", RawProto.cat(series("team-b", B_SECRET), series("team-c", "c-host")));
    assertEquals(400, bc.statusCode(), "team-b's batch is rejected downstream: " + bc.body());
  }

  @AfterEach
  void stop() throws Exception {
    relay.close();
  }

  private static byte[] series(String tenant, String host) {
    return RawProto.series(
        RawProto.label("__name__", "up"),
        RawProto.label("host", host),
        RawProto.label("service_id", tenant),
        RawProto.sample(1, 1000));
  }

  private HttpResponse<String> write(String token, byte[] request) throws Exception {
    return relay.write(request, "Authorization", "Bearer " + token);
  }

  private HttpResponse<String> get(String path, String token) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(relay.uri(path)).GET();
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @SuppressWarnings("unchecked")
  private List<String> apiTenants(String token) throws Exception {
    HttpResponse<String> r = get("/api/v1/tenants", token);
    assertEquals(200, r.statusCode(), r.body());
    Map<String, Object> doc = (Map<String, Object>) MiniJson.parse(r.body());
    List<Map<String, Object>> rows = (List<Map<String, Object>>) doc.get("tenants");
    assertEquals(
        (double) rows.size(), doc.get("tracked_tenants"), "the count is of the rows shown");
    return rows.stream().map(t -> (String) t.get("tenant")).sorted().toList();
  }

  /** The values of the {@code tenant} label in a scrape. */
  private static Set<String> scrapedTenants(String scrape) {
    Set<String> tenants = new TreeSet<>();
    Matcher m = Pattern.compile("[{,]tenant=\"([^\"]*)\"").matcher(scrape);
    while (m.find()) {
      tenants.add(m.group(1));
    }
    return tenants;
  }

  @Test
  void aWriterLimitedToSomeTenantsSeesOnlyTheirRows() throws Exception {
    assertEquals(List.of("team-a"), apiTenants("tok-a"));
    assertEquals(List.of("team-b", "team-c"), apiTenants("tok-bc"));
    assertFalse(get("/api/v1/tenants", "tok-a").body().contains(B_SECRET));
    assertTrue(
        get("/api/v1/tenants", "tok-bc").body().contains(B_SECRET),
        "team-b's reader sees its own downstream error");

    String page = get("/tenants", "tok-a").body();
    assertTrue(page.contains("<tr data-tenant=\"team-a\">"), page);
    assertFalse(page.contains("team-b"), page);
    assertFalse(page.contains("team-c"), page);
    assertFalse(page.contains(B_SECRET), page);
    assertFalse(page.contains("Series without a tenant label"), "nothing of the other series");
    assertTrue(
        get("/api/v1/tenants", "tok-a")
            .body()
            .contains("\"series_without_tenant_label_last_minute\":null"));
  }

  @Test
  void theViewTokenAndAWriterOfEveryTenantSeeEveryRow() throws Exception {
    assertEquals(List.of("team-a", "team-b", "team-c"), apiTenants("view-secret"));
    assertEquals(List.of("team-a", "team-b", "team-c"), apiTenants("tok-all"));
    assertTrue(get("/tenants", "view-secret").body().contains(B_SECRET));
    assertTrue(
        get("/tenants", "view-secret")
            .body()
            .contains("Series without a tenant label (service_id) in the last minute: none"));
  }

  @Test
  void aWriterLimitedToSomeTenantsScrapesOnlyTheirSeries() throws Exception {
    String a = get("/metrics", "tok-a").body();
    assertEquals(Set.of("team-a"), scrapedTenants(a));
    assertTrue(a.contains("relay_tenant_series_in_total{tenant=\"team-a\"} 1"), a);
    for (String line : a.split("\n")) {
      assertTrue(
          line.startsWith("#") || line.contains("tenant=\"team-a\""),
          "only team-a's series: " + line);
    }
    assertEquals(Set.of("team-b", "team-c"), scrapedTenants(get("/metrics", "tok-bc").body()));

    String all = get("/metrics", "view-secret").body();
    assertEquals(Set.of("team-a", "team-b", "team-c"), scrapedTenants(all));
    assertTrue(all.contains("relay_requests_total{status=\"204\"}"), "relay-wide series too");
    assertEquals(
        Set.of("team-a", "team-b", "team-c"), scrapedTenants(get("/metrics", "tok-all").body()));
  }

  @Test
  void withoutCredentialsNothingIsReadAndTheViewTokenWritesNothing() throws Exception {
    for (String path : List.of("/metrics", "/tenants", "/api/v1/tenants")) {
      HttpResponse<String> r = get(path, null);
      assertEquals(401, r.statusCode(), path);
      assertEquals(
          List.of("Bearer realm=\"prw-relay\""), r.headers().allValues("WWW-Authenticate"), path);
      assertEquals(401, get(path, "wrong").statusCode(), path);
    }
    HttpResponse<String> w =
        relay.write(series("team-a", "a-host"), "Authorization", "Bearer view-secret");
    assertEquals(401, w.statusCode());
    assertEquals(200, get("/-/healthy", null).statusCode());
  }
}
