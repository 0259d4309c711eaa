package io.prwrelay.server.downstream;

import io.prwrelay.server.config.DownstreamConfig.ProtocolMode;
import io.prwrelay.server.protocol.Protocol;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;

/**
 * Which Remote Write version PRW 2.0 input is sent downstream in: fixed by {@code
 * relay.downstream.protocol} ({@code v1} or {@code v2}), or, with {@code auto}, PRW 2.0 until the
 * downstream answers a PRW 2.0 request with 415, and PRW 1.0 from then on for the life of the
 * process. PRW 1.0 input is always sent as 1.0. Shared by every event loop; thread-safe.
 */
public final class DownstreamProtocol {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.server");

  private final ProtocolMode mode;
  private volatile Protocol current;
  private final AtomicLong fallbacks = new AtomicLong();

  public DownstreamProtocol(ProtocolMode mode) {
    this.mode = mode;
    this.current = mode == ProtocolMode.V1 ? Protocol.V1 : Protocol.V2;
  }

  /** The configured mode. */
  public ProtocolMode mode() {
    return mode;
  }

  /** The protocol a PRW 2.0 batch is sent in now. */
  public Protocol forV2Input() {
    return current;
  }

  /**
   * True when {@code outcome} of a request sent in {@code sent} means the downstream does not take
   * PRW 2.0 and the batch should be converted and sent again: a 415 in {@code auto} mode.
   */
  public boolean fallsBackOn(Protocol sent, AttemptOutcome outcome) {
    return mode == ProtocolMode.AUTO && sent == Protocol.V2 && outcome.status() == 415;
  }

  /**
   * Switches to PRW 1.0 for good after {@code outcome}; logs one line the first time. Every 415
   * that led here is counted by {@link #fallbacks()}.
   */
  public void fallBack(AttemptOutcome outcome) {
    fallbacks.incrementAndGet();
    if (current == Protocol.V2) {
      synchronized (this) {
        if (current == Protocol.V2) {
          current = Protocol.V1;
          LOG.warning(
              "the downstream refused Remote Write 2.0 ("
                  + outcome.describe()
                  + "); relay.downstream.protocol=auto converts PRW 2.0 input to 1.0 from now on");
        }
      }
    }
  }

  /** PRW 2.0 requests answered 415 and re-sent as PRW 1.0 (auto mode). */
  public long fallbacks() {
    return fallbacks.get();
  }
}
