package io.prwrelay.core.route;

import static io.prwrelay.core.route.RoutingProperties.route;
import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.RawProto.sample;
import static io.prwrelay.testing.RawProto.series;
import static io.prwrelay.testing.RequestBuffers.MAX_OUTPUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.core.remotewrite.RequestError;
import io.prwrelay.testing.V2RawProto;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A request may carry at most {@link TenantRules#maxTenantsPerRequest()} tenants: the first series
 * of one tenant more rejects the request, before any batch is built, in both protocol versions.
 */
class TenantsPerRequestBoundTest {
  private static byte[] v1Request(int tenants, String defaultedSeriesLabel) {
    byte[] out = new byte[0];
    for (int i = 0; i < tenants; i++) {
      out = cat(out, series(label("service_id", "t" + i), sample(1, 1)));
      out = cat(out, series(label("service_id", "t" + i), sample(2, 2)));
    }
    if (defaultedSeriesLabel != null) {
      out = cat(out, series(label("job", defaultedSeriesLabel), sample(3, 3)));
    }
    return out;
  }

  private static TenantRules rules(int max) {
    return TenantRules.builder().maxTenantsPerRequest(max).build();
  }

  @Test
  void exactlyTheBoundIsRouted() {
    RouteResult r = route(new TenantRouter(rules(3)), v1Request(3, null));
    assertNull(r.error());
    assertEquals(3, r.batches().size());
    r.clear();
  }

  @Test
  void oneTenantOverTheBoundRejectsTheRequestNamingTheSeriesAndTheKey() {
    RouteResult r = route(new TenantRouter(rules(3)), v1Request(5, null));
    RequestError e = r.error();
    assertEquals(RequestError.Kind.TOO_MANY_TENANTS, e.kind());
    assertEquals("timeseries[6]", e.field()); // two series per tenant: t3's first
    assertEquals(
        "the request carries more than 3 tenants (relay.tenant.max-per-request);"
            + " split it into smaller requests",
        e.problem());
    assertEquals(0, r.batches().size());
  }

  @Test
  void theDefaultTenantCountsTowardsTheBound() {
    RouteResult r = route(new TenantRouter(rules(3)), v1Request(3, "no-tenant-label"));
    assertEquals(RequestError.Kind.TOO_MANY_TENANTS, r.error().kind());
    assertEquals("timeseries[6]", r.error().field());
  }

  @Test
  void theBoundHoldsPerRequestNotAcrossRequests() {
    TenantRouter router = new TenantRouter(rules(3));
    for (int i = 0; i < 3; i++) {
      RouteResult r = route(router, v1Request(3, null));
      assertNull(r.error());
      r.clear();
    }
  }

  @Test
  void aPrw2RequestOverTheBoundIsRejectedInBothOutputFormats() {
    List<String> table = new ArrayList<>(List.of("", "__name__", "up", "service_id"));
    List<byte[]> series = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      table.add("t" + i);
      series.add(V2RawProto.series(V2RawProto.refs(1, 2, 3, table.size() - 1), sample(1, 1)));
      series.add(V2RawProto.series(V2RawProto.refs(1, 2, 3, table.size() - 1), sample(2, 2)));
    }
    byte[] request =
        V2RawProto.request(table.toArray(String[]::new), series.toArray(byte[][]::new));
    for (V2BatchEncoder.Format format : V2BatchEncoder.Format.values()) {
      RouteResult r = route(new V2TenantRouter(rules(3), format, MAX_OUTPUT), request);
      assertEquals(RequestError.Kind.TOO_MANY_TENANTS, r.error().kind(), format.name());
      assertEquals("timeseries[6]", r.error().field(), format.name());
      assertEquals(0, r.batches().size());
      RouteResult ok = route(new V2TenantRouter(rules(5), format, MAX_OUTPUT), request);
      assertNull(ok.error(), format.name());
      assertEquals(5, ok.batches().size());
      ok.clear();
    }
  }
}
