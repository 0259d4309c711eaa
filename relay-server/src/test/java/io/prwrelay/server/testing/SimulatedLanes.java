package io.prwrelay.server.testing;

import io.netty.buffer.ByteBufAllocator;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.lane.DeliveryLedger;
import io.prwrelay.server.lane.LaneSettings;
import io.prwrelay.server.lane.Lanes;
import io.prwrelay.server.metrics.RelayMetrics;
import java.util.List;

/**
 * The lanes and the delivery ledger of one {@link SimulatedLoop}, built from a {@link RelayConfig}
 * as the relay builds them: no queues, no observer but the metrics', sending to a {@link
 * ScriptedSender}, the ledger on the loop's clock. What the ingress and the write pipeline are
 * built on in their tests; the test closes the lanes.
 */
public record SimulatedLanes(Lanes lanes, DeliveryLedger ledger) {
  public static SimulatedLanes of(
      RelayConfig config, SimulatedLoop sim, ScriptedSender sender, RelayMetrics metrics) {
    Lanes lanes =
        new Lanes(
            List.of(sim.loop()),
            LaneSettings.of(config),
            sender,
            ByteBufAllocator.DEFAULT,
            metrics.laneObserver(),
            null);
    DeliveryLedger ledger =
        new DeliveryLedger(
            config.delivery().ledgerMaxEntries(),
            config.delivery().ledgerTtl().toNanos(),
            sim::now,
            config.delivery().throttled());
    return new SimulatedLanes(lanes, ledger);
  }
}
