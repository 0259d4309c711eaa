package io.prwrelay.server.http;

import io.prwrelay.core.codec.ZstdCodec;
import io.prwrelay.core.route.TenantRouter;
import io.prwrelay.core.route.TenantRules;

/**
 * What one event loop thread reuses for every request it processes: a tenant router (flyweight, not
 * thread-safe) and a zstd decompression context.
 */
final class LoopResources implements AutoCloseable {
  final TenantRouter router;
  final ZstdCodec zstd = new ZstdCodec();

  LoopResources(TenantRules rules) {
    this.router = new TenantRouter(rules);
  }

  @Override
  public void close() {
    zstd.close();
  }
}
