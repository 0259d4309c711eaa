package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.prwrelay.server.protocol.Protocol;

/**
 * Sends one tenant batch downstream, once, and reports how that attempt ended. The tenant's lane
 * decides about retries, deadlines and concurrency and repeats this step (in {@code
 * io.prwrelay.server.lane}: {@code Settlement} decides what follows each answer, {@code Health} the
 * backoff); {@link DownstreamClient} implements it over pooled HTTP connections.
 */
public interface TenantSender {
  /**
   * Makes one attempt.
   *
   * @param loop the caller's event loop; the returned future completes on it
   * @param tenant tenant ID for the tenant header (validated, safe for a header)
   * @param body borrows the snappy-compressed {@code WriteRequest}: the caller keeps ownership and
   *     may release it once the future completes
   * @param timeoutNanos limit for this attempt, connect and response included; past it the future
   *     completes with a transport failure
   * @return never fails: transport problems are outcomes with status {@link
   *     AttemptOutcome#TRANSPORT_FAILURE}
   */
  Future<AttemptOutcome> send(EventLoop loop, String tenant, ByteBuf body, long timeoutNanos);

  /**
   * Makes one attempt with a body of {@code protocol}, sent with that protocol's {@code
   * Content-Type} and {@code X-Prometheus-Remote-Write-Version}. A sender that speaks only PRW 1.0
   * need not override it.
   *
   * @param body borrows the snappy-compressed request of {@code protocol}, as in {@link #send(
   *     EventLoop, String, ByteBuf, long)}
   */
  default Future<AttemptOutcome> send(
      EventLoop loop, String tenant, Protocol protocol, ByteBuf body, long timeoutNanos) {
    if (protocol != Protocol.V1) {
      throw new UnsupportedOperationException("this sender speaks Remote Write 1.0 only");
    }
    return send(loop, tenant, body, timeoutNanos);
  }

  /**
   * Makes one attempt as {@link #send(EventLoop, String, Protocol, ByteBuf, long)} does, telling
   * the downstream with {@code Retry-Attempt: n} that the batch was sent {@code n} times before
   * ({@code n > 0}). Mimir scales the {@code Retry-After} of its 429 and 5xx answers by it; a
   * sender that does not send the header need not override this.
   *
   * @param retryAttempt earlier sends of the batch (by the relay or by its sender), 0 for none
   */
  default Future<AttemptOutcome> send(
      EventLoop loop,
      String tenant,
      Protocol protocol,
      int retryAttempt,
      ByteBuf body,
      long timeoutNanos) {
    return send(loop, tenant, protocol, body, timeoutNanos);
  }

  /**
   * How many attempts {@code loop} can have on the wire at once (its connections); more wait for a
   * connection inside the sender. Unbounded unless the sender says otherwise.
   */
  default int connections(EventLoop loop) {
    return Integer.MAX_VALUE;
  }
}
