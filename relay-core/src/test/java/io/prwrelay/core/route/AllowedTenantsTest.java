package io.prwrelay.core.route;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.RawProto.sample;
import static io.prwrelay.testing.RawProto.series;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.remotewrite.RequestError;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link TenantRules#allowed()}: a series whose tenant is not on the list goes where a series
 * without a tenant goes ({@link TenantRules#missing()}), counted as {@link
 * TenantProblem#NOT_ALLOWED}; the listed tenants and the default tenant are routed as usual.
 */
class AllowedTenantsTest {
  private static final byte[] A = series(label("service_id", "team-a"), sample(1, 1));
  private static final byte[] ROGUE_1 = series(label("service_id", "rogue-1"), sample(2, 2));
  private static final byte[] ROGUE_2 = series(label("service_id", "rogue-2"), sample(3, 3));
  private static final byte[] ROGUE_1_AGAIN =
      series(label("job", "x"), label("service_id", "rogue-1"), sample(4, 4));
  private static final byte[] UNLABELLED = series(label("job", "node"), sample(5, 5));

  private static TenantRules.Builder allowingTeamA() {
    return TenantRules.builder().allowed(List.of("team-a"));
  }

  @Test
  void aTenantNotAllowedGoesToTheDefaultTenantAndIsCounted() {
    TenantRouter router = new TenantRouter(allowingTeamA().build());
    Map<String, byte[]> out =
        RouteAssertions.bytesByTenant(
            router,
            cat(A, ROGUE_1, ROGUE_2, ROGUE_1_AGAIN, UNLABELLED),
            r -> {
              assertEquals(3, r.defaulted(TenantProblem.NOT_ALLOWED));
              assertEquals(1, r.defaulted(TenantProblem.MISSING));
            });
    assertEquals(2, out.size(), "no batch of its own for a tenant not allowed");
    assertArrayEquals(A, out.get("team-a"));
    assertArrayEquals(cat(ROGUE_1, ROGUE_2, ROGUE_1_AGAIN, UNLABELLED), out.get("anonymous"));
  }

  @Test
  void aTenantNotAllowedIsDroppedUnderDrop() {
    TenantRouter router =
        new TenantRouter(allowingTeamA().missing(TenantRules.MissingPolicy.DROP).build());
    Map<String, byte[]> out =
        RouteAssertions.bytesByTenant(
            router,
            cat(ROGUE_1, A, ROGUE_2),
            r -> assertEquals(2, r.dropped(TenantProblem.NOT_ALLOWED)));
    assertEquals(List.of("team-a"), List.copyOf(out.keySet()));
    assertArrayEquals(A, out.get("team-a"));
  }

  @Test
  void aTenantNotAllowedRejectsTheRequestUnderReject() {
    TenantRouter router =
        new TenantRouter(allowingTeamA().missing(TenantRules.MissingPolicy.REJECT).build());
    ByteBuf in = Unpooled.wrappedBuffer(cat(A, ROGUE_1));
    RouteResult result = router.route(in, PooledByteBufAllocator.DEFAULT);
    try {
      RequestError e = result.error();
      assertEquals(RequestError.Kind.NO_TENANT, e.kind());
      assertEquals(
          "timeseries[1]: the value of tenant label service_id is not one of the allowed tenants"
              + " (not_allowed) and relay.tenant.missing is reject",
          e.field() + ": " + e.problem());
    } finally {
      result.clear();
      in.release();
    }
  }

  @Test
  void theListNamesTenantsAsSentDownstreamPrefixIncluded() {
    TenantRouter router =
        new TenantRouter(
            TenantRules.builder().prefix("org-").allowed(List.of("org-team-a")).build());
    Map<String, byte[]> out = RouteAssertions.bytesByTenant(router, cat(A, ROGUE_1), r -> {});
    assertArrayEquals(A, out.get("org-team-a"));
    assertArrayEquals(ROGUE_1, out.get("org-anonymous"), "the default tenant is always allowed");
  }

  @Test
  void anInvalidIdOnTheListIsRefusedNamingIt() {
    TenantRules.InvalidSettingException e =
        assertThrows(
            TenantRules.InvalidSettingException.class,
            () -> TenantRules.builder().allowed(List.of("team-a", "a/b")).build());
    assertEquals(TenantRules.Setting.ALLOWED, e.setting());
    assertEquals("'a/b' is not a valid tenant ID (invalid_character)", e.problem());
  }
}
