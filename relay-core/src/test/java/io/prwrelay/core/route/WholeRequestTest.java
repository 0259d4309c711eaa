package io.prwrelay.core.route;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.sample;
import static io.prwrelay.testing.RawProto.series;
import static io.prwrelay.testing.RawProto.str;
import static io.prwrelay.testing.RawProto.varintField;
import static io.prwrelay.testing.RequestBuffers.MAX_OUTPUT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.core.encode.TenantBatch;
import io.prwrelay.core.encode.V2BatchEncoder;
import io.prwrelay.testing.V2RawProto;
import org.junit.jupiter.api.Test;

/**
 * A request whose series all go to one tenant and in which nothing has to change is its own batch
 * ({@link RouteResult#whole()}): the batch holds the request's bytes, read in place, with the same
 * counts as a spliced batch; anything that would make the batch differ from the request (a second
 * tenant, a removed label, a dropped series, metadata the policy drops, a field the protocol does
 * not define) makes an ordinary spliced batch.
 */
class WholeRequestTest {
  private static final byte[] A1 =
      series(label("job", "x"), label("service_id", "a"), sample(1, 1));
  private static final byte[] A2 = series(label("service_id", "a"), sample(2, 2), sample(3, 3));
  private static final byte[] B1 = series(label("service_id", "b"), sample(4, 4));
  private static final byte[] NO_TENANT = series(label("job", "y"), sample(5, 5));
  private static final byte[] METADATA = len(3, str(2, "http_requests"), str(4, "help text"));

  private static TenantRules.Builder rules() {
    return TenantRules.builder().countSamples(true);
  }

  private static RouteResult route(TenantRules rules, byte[] request) {
    return RoutingProperties.route(new TenantRouter(rules), request);
  }

  private static byte[] content(TenantBatch b) {
    return ByteBufUtil.getBytes(b.content());
  }

  @Test
  void singleTenantRequestIsItsOwnBatchWithItsCounts() {
    byte[] request = cat(A1, A2);
    RouteResult r = route(rules().build(), request);
    try {
      assertNull(r.error());
      assertTrue(r.whole());
      assertEquals(1, r.batches().size());
      TenantBatch b = r.batches().get(0);
      assertEquals("a", b.tenant());
      assertArrayEquals(request, content(b));
      assertEquals(2, b.series());
      assertEquals(3, b.samples());
    } finally {
      r.clear();
    }
  }

  @Test
  void wholeBatchIsTheRequestReadInPlaceNotACopy() {
    byte[] request = cat(A1, A2);
    ByteBuf in = PooledByteBufAllocator.DEFAULT.heapBuffer().writeBytes(request);
    RouteResult r = new TenantRouter(rules().build()).route(in, PooledByteBufAllocator.DEFAULT);
    try {
      assertTrue(r.whole());
      ByteBuf content = r.batches().get(0).content();
      assertEquals(in.array(), content.array());
      assertEquals(2, in.refCnt()); // the caller's reference and the batch's
    } finally {
      r.clear();
      in.release();
    }
    assertEquals(0, in.refCnt());
  }

  @Test
  void seriesWithoutTenantLabelAllGoingToTheDefaultTenantAreWhole() {
    byte[] request = cat(NO_TENANT, NO_TENANT);
    RouteResult r = route(rules().removeLabel(true).build(), request);
    try {
      assertTrue(r.whole());
      assertEquals("anonymous", r.batches().get(0).tenant());
      assertArrayEquals(request, content(r.batches().get(0)));
    } finally {
      r.clear();
    }
  }

  @Test
  void broadcastMetadataWithinItsCapKeepsTheRequestWholeInTheSendersOrder() {
    byte[] request = cat(METADATA, A1, A2);
    RouteResult r = route(rules().build(), request);
    try {
      assertTrue(r.whole());
      assertArrayEquals(request, content(r.batches().get(0)));
      assertEquals(1, r.batches().get(0).metadata());
    } finally {
      r.clear();
    }
  }

  @Test
  void twoTenantsAreSplit() {
    RouteResult r = route(rules().build(), cat(A1, B1, A2));
    try {
      assertFalse(r.whole());
      assertEquals(2, r.batches().size());
      assertArrayEquals(cat(A1, A2), content(r.batches().get(0)));
    } finally {
      r.clear();
    }
  }

  @Test
  void removedTenantLabelMakesASplicedBatch() {
    RouteResult r = route(rules().removeLabel(true).build(), cat(A1, A2));
    try {
      assertFalse(r.whole());
      assertEquals(1, r.batches().size());
      assertTrue(content(r.batches().get(0)).length < A1.length + A2.length);
    } finally {
      r.clear();
    }
  }

  @Test
  void droppedSeriesMakeASplicedBatch() {
    RouteResult r =
        route(rules().missing(TenantRules.MissingPolicy.DROP).build(), cat(A1, NO_TENANT, A2));
    try {
      assertFalse(r.whole());
      assertArrayEquals(cat(A1, A2), content(r.batches().get(0)));
    } finally {
      r.clear();
    }
  }

  @Test
  void metadataThePolicyDropsOrThatIsOverTheCapMakesASplicedBatch() {
    TenantRules drop = rules().metadata(TenantRules.MetadataPolicy.DROP).build();
    TenantRules tinyCap = rules().maxBroadcastMetadataBytes(METADATA.length - 1).build();
    for (TenantRules rules : new TenantRules[] {drop, tinyCap}) {
      RouteResult r = route(rules, cat(A1, METADATA, A2));
      try {
        assertFalse(r.whole());
        assertArrayEquals(cat(A1, A2), content(r.batches().get(0)));
      } finally {
        r.clear();
      }
    }
  }

  @Test
  void fieldProtocolDoesNotDefineIsNotForwarded() {
    // Cortex reads field 1000 of a WriteRequest as skip_label_name_validation: a sender must not
    // reach it through the relay, so the request is spliced (which leaves the field out).
    byte[] request = cat(A1, varintField(1000, 1), A2);
    RouteResult r = route(rules().build(), request);
    try {
      assertFalse(r.whole());
      assertArrayEquals(cat(A1, A2), content(r.batches().get(0)));
    } finally {
      r.clear();
    }
  }

  private static final String[] TABLE = {"", "__name__", "up", "service_id", "a", "b"};
  private static final String[] TABLE_A = {"", "__name__", "up", "service_id", "a"};

  private static RouteResult routeV2(
      TenantRules rules, V2BatchEncoder.Format format, byte[] request) {
    return RoutingProperties.route(new V2TenantRouter(rules, format, MAX_OUTPUT), request);
  }

  @Test
  void singleTenantRemoteWrite2RequestIsItsOwnBatchOnlyAsRemoteWrite2() {
    byte[] request =
        V2RawProto.request(
            TABLE_A,
            V2RawProto.series(V2RawProto.refs(1, 2, 3, 4), V2RawProto.sample(1, 1)),
            V2RawProto.series(V2RawProto.refs(3, 4), V2RawProto.sample(2, 2)));
    RouteResult r = routeV2(rules().build(), V2BatchEncoder.Format.V2, request);
    try {
      assertTrue(r.whole());
      assertArrayEquals(request, content(r.batches().get(0)));
      assertEquals(2, r.batches().get(0).series());
      assertEquals(2, r.batches().get(0).samples());
    } finally {
      r.clear();
    }
    RouteResult converted = routeV2(rules().build(), V2BatchEncoder.Format.V1, request);
    try {
      assertFalse(converted.whole());
      assertEquals(1, converted.batches().size());
    } finally {
      converted.clear();
    }
  }

  @Test
  void remoteWrite2RequestWithASecondTenantARemovedLabelAnUnusedSymbolOrAnUnknownFieldIsSpliced() {
    byte[] a = V2RawProto.series(V2RawProto.refs(1, 2, 3, 4), V2RawProto.sample(1, 1));
    byte[] b = V2RawProto.series(V2RawProto.refs(1, 2, 3, 5), V2RawProto.sample(1, 1));
    byte[] twoTenants = V2RawProto.request(TABLE, a, b);
    byte[] oneTenant = V2RawProto.request(TABLE_A, a);
    byte[] unusedSymbol = V2RawProto.request(TABLE, a); // "b": a batch carries only what it uses
    byte[] unknownField = cat(oneTenant, varintField(1000, 1));
    RouteResult[] results = {
      routeV2(rules().build(), V2BatchEncoder.Format.V2, twoTenants),
      routeV2(rules().removeLabel(true).build(), V2BatchEncoder.Format.V2, oneTenant),
      routeV2(rules().build(), V2BatchEncoder.Format.V2, unusedSymbol),
      routeV2(rules().build(), V2BatchEncoder.Format.V2, unknownField)
    };
    for (RouteResult r : results) {
      try {
        assertNull(r.error());
        assertFalse(r.whole());
      } finally {
        r.clear();
      }
    }
  }
}
