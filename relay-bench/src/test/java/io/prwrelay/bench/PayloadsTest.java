package io.prwrelay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantRouter;
import io.prwrelay.core.route.TenantRules;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Each generated benchmark shape carries the tenants its name says, under the tenant label the
 * benchmarks route by ({@code instance}, their default) and under another one.
 */
class PayloadsTest {
  private static final Map<String, Integer> TENANTS =
      Map.of(
          "node-exporter-10k", 14,
          "batch-2000x10", 10,
          "single-2000", 1,
          "tenants-1000x5", 1000,
          "long-values", 10);

  @Test
  void everyShapeRoutesToTheTenantsItsNameSays() {
    for (String label : new String[] {"instance", "service_id"}) {
      TenantRouter router = new TenantRouter(TenantRules.builder().labels(label).build());
      for (String shape : Payloads.SHAPES) {
        ByteBuf in = Unpooled.wrappedBuffer(Payloads.load(shape, label));
        RouteResult r = router.route(in, PooledByteBufAllocator.DEFAULT);
        try {
          assertEquals(TENANTS.get(shape), r.batches().size(), shape + " by " + label);
          r.batches()
              .forEach(
                  b -> assertEquals(false, b.tenant().equals("anonymous"), shape + " by " + label));
        } finally {
          r.clear();
          in.release();
        }
      }
    }
  }
}
