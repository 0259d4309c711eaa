package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;

/**
 * What identifies a request body in the {@link DeliveryLedger}: the XXH64 of its bytes as received
 * (compressed) and their length.
 */
public record LedgerKey(long hash, int length) {
  /**
   * @param body borrowed; its readable bytes are hashed, indexes unchanged
   */
  public static LedgerKey of(ByteBuf body) {
    return new LedgerKey(BodyHash.xxh64(body), body.readableBytes());
  }
}
