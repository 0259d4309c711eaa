package io.prwrelay.core.route;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.sample;
import static io.prwrelay.testing.RawProto.series;
import static io.prwrelay.testing.RawProto.str;
import static io.prwrelay.testing.RawProto.varintField;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.testing.RawProto;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Routing rules on hand-made requests, including encodings real senders rarely produce. */
class TenantRouterTest {
  private static Map<String, byte[]> route(TenantRules rules, byte[] request) {
    return RouteAssertions.bytesByTenant(new TenantRouter(rules), request, r -> {});
  }

  private static TenantRules.Builder rules() {
    return TenantRules.builder();
  }

  @Test
  void firstConfiguredLabelWinsRegardlessOfSortOrder() {
    byte[] both = series(label("a_tenant", "from-a"), label("z_tenant", "from-z"), sample(1, 1));
    byte[] onlyA = series(label("a_tenant", "only-a"), sample(2, 2));
    Map<String, byte[]> out =
        route(rules().labels("z_tenant", "a_tenant").build(), cat(both, onlyA));
    assertEquals(2, out.size());
    assertArrayEquals(both, out.get("from-z"));
    assertArrayEquals(onlyA, out.get("only-a"));
  }

  @Test
  void emptyValueCountsAsAbsentAndFallsThroughToTheNextLabel() {
    byte[] emptyValue = len(1, str(1, "service_id"), str(2, ""));
    byte[] s = series(emptyValue, label("team", "t1"), sample(1, 1));
    Map<String, byte[]> out = route(rules().labels("service_id", "team").build(), s);
    assertArrayEquals(s, out.get("t1"));
    assertEquals(1, out.size());
  }

  @Test
  void routesSeriesWithoutTenantLabelToDefaultTenant() {
    byte[] s = series(label("job", "node"), sample(1, 1));
    Map<String, byte[]> out = route(rules().prefix("org-").build(), s);
    assertArrayEquals(s, out.get("org-anonymous"));
  }

  @Test
  void labelValueEqualToTheDefaultTenantSharesItsBatch() {
    byte[] a = series(label("job", "x"), sample(1, 1));
    byte[] b = series(label("service_id", "anonymous"), sample(2, 2));
    Map<String, byte[]> out = route(rules().build(), cat(a, b));
    assertEquals(1, out.size());
    assertArrayEquals(cat(a, b), out.get("anonymous"));
  }

  @Test
  void readsLabelsThatFollowSamplesAndValuesThatPrecedeNames() {
    byte[] valueFirstLabel = len(1, str(2, "t-late"), str(1, "service_id"));
    byte[] s = series(sample(1, 1), label("job", "x"), sample(2, 2), valueFirstLabel);
    Map<String, byte[]> out = route(rules().build(), s);
    assertArrayEquals(s, out.get("t-late"));
  }

  @Test
  void keepsUnknownSeriesFieldsAndDropsUnknownRequestFields() {
    byte[] s =
        series(
            label("service_id", "t"),
            varintField(9, 42),
            len(1, str(1, "job"), varintField(7, 1), str(2, "x")),
            sample(1, 1));
    byte[] request = cat(varintField(2, 5), s, RawProto.bytes(0x7B, 0x7C));
    Map<String, byte[]> out = route(rules().build(), request);
    assertArrayEquals(s, out.get("t"));
  }

  @Test
  void firstNonEmptyOccurrenceOfADuplicatedTenantLabelWins() {
    byte[] s = series(label("service_id", "first"), label("service_id", "second"), sample(1, 1));
    assertArrayEquals(s, route(rules().build(), s).get("first"));
  }

  @Test
  void removeLabelDropsOnlyTheResolvingLabelAndFixesTheLength() {
    byte[] s =
        series(label("__name__", "up"), label("service_id", "t"), label("team", "x"), sample(1, 1));
    byte[] expected = series(label("__name__", "up"), label("team", "x"), sample(1, 1));
    Map<String, byte[]> out =
        route(rules().labels("service_id", "team").removeLabel(true).build(), s);
    assertArrayEquals(expected, out.get("t"));
  }

  @Test
  void removeLabelRewritesTheLengthVarintWhenItShrinks() {
    String big = "v".repeat(120);
    // 144 bytes of content need a 2-byte length; without the tenant label, 127 fit in one byte.
    byte[] s = series(label("service_id", "t"), label("l", big));
    byte[] expected = series(label("l", big));
    assertEquals(1 + 2 + 144, s.length);
    assertEquals(1 + 1 + 127, expected.length);
    assertArrayEquals(expected, route(rules().removeLabel(true).build(), s).get("t"));
  }

  @Test
  void invalidTenantValueIsNeverUsedAsATenant() {
    byte[] crlf = series(label("service_id", "a\r\nX-Scope-OrgID: evil"), sample(1, 1));
    byte[] pipe = series(label("service_id", "a|b"), sample(1, 1));
    byte[] good = series(label("service_id", "good"), sample(1, 1));
    TenantRouter router = new TenantRouter(rules().missing(TenantRules.MissingPolicy.DROP).build());
    ByteBuf in = Unpooled.wrappedBuffer(cat(crlf, good, pipe, crlf));
    RouteResult result = router.route(in, PooledByteBufAllocator.DEFAULT);
    try {
      assertEquals(1, result.batches().size());
      assertEquals("good", result.batches().get(0).tenant());
      assertEquals(3, result.dropped(TenantProblem.INVALID_CHARACTER));
      assertEquals(3, result.droppedTotal());
    } finally {
      result.clear();
      in.release();
    }
  }

  @Test
  void metadataGoesToEveryTenantOfTheRequestUnlessDropped() {
    byte[] meta = len(3, varintField(1, 1), str(2, "up"), str(4, "help"));
    byte[] a = series(label("service_id", "a"), sample(1, 1));
    byte[] b = series(label("service_id", "b"), sample(1, 1));
    byte[] request = cat(meta, a, b, meta);
    Map<String, byte[]> out = route(rules().build(), request);
    assertArrayEquals(cat(a, meta, meta), out.get("a"));
    assertArrayEquals(cat(b, meta, meta), out.get("b"));
    Map<String, byte[]> dropped =
        route(rules().metadata(TenantRules.MetadataPolicy.DROP).build(), request);
    assertArrayEquals(a, dropped.get("a"));
    assertArrayEquals(b, dropped.get("b"));
  }

  @Test
  void metadataOnlyRequestOfAnUnknownFamilyGoesToTheDefaultTenant() {
    byte[] meta = len(3, varintField(1, 1), str(2, "up"));
    Map<String, byte[]> out = route(rules().build(), cat(meta, meta));
    assertEquals(1, out.size());
    assertArrayEquals(cat(meta, meta), out.get(TenantRules.DEFAULT_TENANT));
  }

  @Test
  void emptyRequestProducesNoBatch() {
    assertEquals(0, route(rules().build(), new byte[0]).size());
  }

  @Test
  void tenantTableStartsOverAtItsBoundAndKeepsRoutingCorrectly() {
    TenantRouter router = new TenantRouter(rules().maxCachedTenants(3).build());
    for (int round = 0; round < 20; round++) {
      byte[] s1 = series(label("service_id", "t" + round), sample(1, 1));
      byte[] s2 = series(label("service_id", "t" + (round + 1)), sample(1, 1));
      ByteBuf in = Unpooled.wrappedBuffer(cat(s1, s2, s1));
      RouteResult result = router.route(in, PooledByteBufAllocator.DEFAULT);
      try {
        assertEquals(2, result.batches().size());
        assertEquals("t" + round, result.batches().get(0).tenant());
        assertArrayEquals(cat(s1, s1), ByteBufUtil.getBytes(result.batches().get(0).content()));
        assertEquals("t" + (round + 1), result.batches().get(1).tenant());
      } finally {
        result.clear();
        in.release();
      }
    }
  }

  @Test
  void takenBatchBelongsToTheCaller() {
    TenantRouter router = new TenantRouter(rules().build());
    byte[] s = series(label("service_id", "t"), sample(1, 1));
    ByteBuf in = Unpooled.wrappedBuffer(s);
    RouteResult result = router.route(in, PooledByteBufAllocator.DEFAULT);
    ByteBuf taken = result.batches().get(0).takeContent();
    result.clear();
    in.release();
    assertEquals(1, taken.refCnt());
    assertArrayEquals(s, ByteBufUtil.getBytes(taken));
    taken.release();
  }
}
