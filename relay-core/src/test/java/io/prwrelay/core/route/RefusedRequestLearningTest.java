package io.prwrelay.core.route;

import static io.prwrelay.testing.RawProto.cat;
import static io.prwrelay.testing.RawProto.label;
import static io.prwrelay.testing.RawProto.len;
import static io.prwrelay.testing.RawProto.sample;
import static io.prwrelay.testing.RawProto.series;
import static io.prwrelay.testing.RawProto.str;
import static io.prwrelay.testing.RawProto.varintField;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.remotewrite.RequestError;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * A request routed for a caller that refuses one of its tenants teaches the shared metric families
 * nothing, split or whole; the same request accepted teaches its pairs, and the batches are the
 * same either way.
 */
class RefusedRequestLearningTest {
  private final AtomicLong clock = new AtomicLong(5_000_000_000L);
  private final MetricFamilies families =
      new MetricFamilies(1000, Duration.ofMinutes(10).toNanos(), clock::get);
  private final TenantRouter router =
      new TenantRouter(TenantRules.builder().build(), false, families);

  private static byte[] seriesOf(String name, String tenant) {
    return series(label("__name__", name), label("service_id", tenant), sample(1, 1));
  }

  private List<String> route(byte[] request, Predicate<String> accepted) {
    ByteBuf in = Unpooled.wrappedBuffer(request);
    RouteResult r = router.route(in, PooledByteBufAllocator.DEFAULT, accepted);
    try {
      List<String> tenants = new ArrayList<>();
      r.batches().forEach(b -> tenants.add(b.tenant()));
      return tenants;
    } finally {
      r.clear();
      in.release();
    }
  }

  private List<String> tenantsOf(String family) {
    byte[] f = family.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    List<String> out = new ArrayList<>();
    families.tenantsOf(f, 0, f.length, out);
    return out;
  }

  @Test
  void aRefusedRequestTeachesNoFamilyAndAnAcceptedOneDoes() {
    byte[] split = cat(seriesOf("jobs_total", "team-a"), seriesOf("jobs_total", "team-b"));
    byte[] whole = cat(seriesOf("queue_depth", "team-b"));
    Predicate<String> onlyA = "team-a"::equals;
    assertEquals(List.of("team-a", "team-b"), route(split, onlyA));
    assertEquals(List.of("team-b"), route(whole, onlyA));
    assertEquals(0, families.size());
    assertEquals(List.of(), tenantsOf("jobs"));
    // Metadata of a family no accepted request taught goes nowhere by family.
    byte[] metadata = len(3, varintField(1, 1), str(2, "jobs_total"), str(4, "Jobs."));
    assertEquals(List.of("anonymous"), route(metadata, t -> true));

    assertEquals(List.of("team-a", "team-b"), route(split, t -> true));
    assertEquals(List.of("team-b"), route(whole, t -> true));
    assertEquals(Set.of("team-a", "team-b"), Set.copyOf(tenantsOf("jobs_total")));
    assertEquals(List.of("team-b"), tenantsOf("queue_depth"));
  }

  @Test
  void aRequestRefusedForItsMemoryTeachesNoFamily() {
    // Its metadata, broadcast to both tenants, asks for more than the request: refused.
    byte[] split =
        cat(
            seriesOf("jobs_total", "team-a"),
            seriesOf("jobs_total", "team-b"),
            len(3, varintField(1, 1), str(2, "jobs_total"), str(4, "Jobs.")));
    ByteBuf in = Unpooled.wrappedBuffer(split);
    RouteResult r =
        router.route(
            in,
            PooledByteBufAllocator.DEFAULT,
            MetricFamilies.NO_SENDER,
            t -> true,
            bytes -> false);
    try {
      assertEquals(RequestError.Kind.OVER_BUDGET, r.error().kind(), r.error().toString());
      assertEquals(List.of(), r.batches());
    } finally {
      r.clear();
      in.release();
    }
    assertEquals(0, families.size(), "a request answered 503/413 for its memory teaches nothing");
    assertEquals(List.of(), tenantsOf("jobs_total"));
  }
}
