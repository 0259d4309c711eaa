package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;

/** Sends one tenant batch downstream once. */
public interface TenantSender {
  /**
   * Sends {@code body} once for {@code tenant}.
   *
   * @param loop the caller's event loop; the returned future completes on it
   * @param body borrowed snappy-compressed WriteRequest
   * @param timeoutNanos limit for this attempt
   * @return never fails: transport problems are outcomes with status {@link
   *     AttemptOutcome#TRANSPORT_FAILURE}
   */
  Future<AttemptOutcome> send(EventLoop loop, String tenant, ByteBuf body, long timeoutNanos);
}
