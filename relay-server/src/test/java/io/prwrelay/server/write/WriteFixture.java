package io.prwrelay.server.write;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.internal.PlatformDependent;
import io.prwrelay.server.config.ConfigException;
import io.prwrelay.server.config.DownstreamConfig.ProtocolMode;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.config.ServerConfig;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.insight.TenantInsight;
import io.prwrelay.server.lane.DeliveryLedger;
import io.prwrelay.server.lane.Lanes;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.testing.SimulatedLanes;
import java.util.HashMap;
import java.util.Map;

/**
 * A {@link WriteProcessor} and its {@link InflightBudget} built from a {@link RelayConfig} as the
 * ingress builds them, on one {@link SimulatedLoop} whose lanes (no queues, no observer but the
 * metrics) send to a {@link ScriptedSender}. The test owns the channel of the loop and the lanes:
 * it closes the lanes and ends with {@code channel.finishAndReleaseAll()}.
 */
final class WriteFixture {
  final SimulatedLoop sim = new SimulatedLoop();
  final EmbeddedChannel channel = sim.channel();
  final Lanes lanes;
  final InflightBudget budget;
  final WriteProcessor processor;

  WriteFixture(RelayConfig config, ScriptedSender sender, RelayMetrics metrics) {
    SimulatedLanes built = SimulatedLanes.of(config, sim, sender, metrics);
    lanes = built.lanes();
    DeliveryLedger ledger = built.ledger();
    ServerConfig server = config.server();
    long maxDirect = PlatformDependent.maxDirectMemory();
    long maxHeap = Runtime.getRuntime().maxMemory();
    budget =
        new InflightBudget(
            server.inflightLimit(maxDirect, maxHeap),
            server.inflightLimitPerClient(maxDirect, maxHeap));
    processor =
        new WriteProcessor(
            server.maxDecompressedBytes(),
            server.maxDecompressionRatio(),
            config.tenant(),
            lanes,
            ledger,
            config.downstream().timeout(),
            metrics,
            new DownstreamProtocol(ProtocolMode.V1),
            TenantInsight.of(config.metrics().insight()));
  }

  /** {@code base} with {@code overrides} over it, as config keys. */
  static RelayConfig config(Map<String, String> base, Map<String, String> overrides)
      throws ConfigException {
    Map<String, String> props = new HashMap<>(base);
    props.putAll(overrides);
    return RelayConfig.load(null, props, Map.of());
  }
}
