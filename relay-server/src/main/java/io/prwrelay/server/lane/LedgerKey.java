package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;

/**
 * What identifies a request body in the {@link DeliveryLedger}: who sent it (the ingress's keyed
 * 64-bit sender id) and the XXH64 of its bytes as received (compressed) and their length. Two
 * senders' byte-identical bodies are two keys: what one sender's attempts did never decides how
 * another's are answered.
 */
public record LedgerKey(long sender, long hash, int length) {
  /**
   * @param sender the sender's id
   * @param body borrowed; its readable bytes are hashed, indexes unchanged
   */
  public static LedgerKey of(long sender, ByteBuf body) {
    return new LedgerKey(sender, BodyHash.xxh64(body), body.readableBytes());
  }
}
