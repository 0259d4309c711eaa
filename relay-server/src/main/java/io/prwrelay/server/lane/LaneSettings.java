package io.prwrelay.server.lane;

import io.prwrelay.core.remotewrite.HaLabels;
import io.prwrelay.server.config.DeliveryConfig;
import io.prwrelay.server.config.DownstreamConfig;
import io.prwrelay.server.config.RelayConfig;
import java.time.Duration;

/**
 * Bounds and timing of every tenant lane.
 *
 * @param maxConcurrentSends downstream requests one tenant may have in flight at once: its share of
 *     the connection pool, whatever its downstream does
 * @param maxPendingBytes uncompressed bytes that may wait in one lane; a fragment beyond it is
 *     answered 503 at once
 * @param batchMaxBytes largest coalesced downstream request, in uncompressed bytes (a single larger
 *     fragment is still sent alone)
 * @param linger how long a lane that already has a send in flight waits for more fragments before
 *     opening another send; an idle lane sends once its loop has handed it the fragments already
 *     waiting there
 * @param idleTimeout a lane with nothing to do and no backoff for this long is forgotten
 * @param maxLanes lanes at most; when every lane is busy, fragments of a new tenant get 503
 * @param initialBackoff first backoff after a downstream failure (doubles per consecutive failure,
 *     with jitter)
 * @param maxBackoff largest backoff ({@code Retry-After} may ask for more)
 * @param attemptTimeout limit of one downstream attempt
 * @param maxConvertedBytes largest PRW 1.0 request a lane makes of a PRW 2.0 batch for a downstream
 *     that takes only 1.0 ({@code relay.server.max-decompressed-bytes}); a batch that would convert
 *     to more is rejected for good (400) without being converted
 * @param haLabels the downstream's HA deduplication labels: fragments travel in one request only
 *     when {@link HaLabels#judgedAlike} says so of their first series
 */
public record LaneSettings(
    int maxConcurrentSends,
    long maxPendingBytes,
    int batchMaxBytes,
    Duration linger,
    Duration idleTimeout,
    int maxLanes,
    Duration initialBackoff,
    Duration maxBackoff,
    Duration attemptTimeout,
    int maxConvertedBytes,
    HaLabels haLabels) {

  /** With the default HA labels of Cortex and Mimir ({@link HaLabels#defaults()}). */
  public LaneSettings(
      int maxConcurrentSends,
      long maxPendingBytes,
      int batchMaxBytes,
      Duration linger,
      Duration idleTimeout,
      int maxLanes,
      Duration initialBackoff,
      Duration maxBackoff,
      Duration attemptTimeout,
      int maxConvertedBytes) {
    this(
        maxConcurrentSends,
        maxPendingBytes,
        batchMaxBytes,
        linger,
        idleTimeout,
        maxLanes,
        initialBackoff,
        maxBackoff,
        attemptTimeout,
        maxConvertedBytes,
        HaLabels.defaults());
  }

  /**
   * The settings of {@code relay.lanes.*}, with the backoff and attempt limit of the downstream and
   * the decompressed bound of the server.
   */
  public static LaneSettings of(RelayConfig config) {
    DeliveryConfig.Lanes lanes = config.delivery().lanes();
    DownstreamConfig downstream = config.downstream();
    return new LaneSettings(
        lanes.maxConcurrentSends(),
        lanes.maxPendingBytes(),
        lanes.batchMaxBytes(),
        lanes.linger(),
        lanes.idleTimeout(),
        lanes.max(),
        downstream.initialBackoff(),
        downstream.maxBackoff(),
        downstream.attemptTimeout(),
        config.server().maxDecompressedBytes(),
        config.tenant().haLabels());
  }
}
