package io.prwrelay.server.http;

import io.prwrelay.core.codec.ZstdCodec;
import io.prwrelay.core.encode.WriteRequestCounter;
import io.prwrelay.core.route.TenantRouter;
import io.prwrelay.core.route.TenantRules;

/**
 * What one event loop thread reuses for every request it processes: a tenant router (flyweight, not
 * thread-safe), a counter for requests forwarded whole, and a zstd decompression context.
 */
final class LoopResources implements AutoCloseable {
  final TenantRouter router;
  final ZstdCodec zstd = new ZstdCodec();
  final WriteRequestCounter counter = new WriteRequestCounter();

  LoopResources(TenantRules rules) {
    this.router = new TenantRouter(rules);
  }

  @Override
  public void close() {
    zstd.close();
  }
}
