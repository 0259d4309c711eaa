package io.prwrelay.server.ingress;

import io.netty.channel.embedded.EmbeddedChannel;
import io.prwrelay.server.config.ConfigException;
import io.prwrelay.server.config.DownstreamConfig.ProtocolMode;
import io.prwrelay.server.config.RelayConfig;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.downstream.ScriptedSender;
import io.prwrelay.server.downstream.SimulatedLoop;
import io.prwrelay.server.lane.DeliveryLedger;
import io.prwrelay.server.lane.Lanes;
import io.prwrelay.server.metrics.RelayMetrics;
import io.prwrelay.server.testing.SimulatedLanes;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * An {@link HttpIngress} built from a {@link RelayConfig} with {@link HttpIngress#of}, as {@code
 * RelayServer} builds it, on one {@link SimulatedLoop} whose lanes (no queues, no observer but the
 * metrics) send to a {@link ScriptedSender}, with the first connection as an {@link
 * EmbeddedChannel} on that loop. The test owns the channel and the lanes: it closes the lanes and
 * ends with {@code channel.finishAndReleaseAll()}.
 */
final class IngressFixture {
  final SimulatedLoop sim = new SimulatedLoop();
  final EmbeddedChannel channel = sim.channel();
  final Lanes lanes;
  final HttpIngress ingress;

  private IngressFixture(RelayConfig config, ScriptedSender sender, RelayMetrics metrics)
      throws IOException {
    SimulatedLanes built = SimulatedLanes.of(config, sim, sender, metrics);
    lanes = built.lanes();
    DeliveryLedger ledger = built.ledger();
    ingress =
        HttpIngress.of(config, lanes, ledger, metrics, new DownstreamProtocol(ProtocolMode.V1));
    ingress.listening();
  }

  /** {@code base} with {@code overrides} over it, as config keys. */
  static RelayConfig config(Map<String, String> base, Map<String, String> overrides)
      throws ConfigException {
    Map<String, String> props = new HashMap<>(base);
    props.putAll(overrides);
    return RelayConfig.load(null, props, Map.of());
  }

  /** The channel holds only the {@link IngressHandler}: it reads and writes HTTP messages. */
  static IngressFixture handlerOnly(RelayConfig config, ScriptedSender sender, RelayMetrics metrics)
      throws IOException {
    IngressFixture f = new IngressFixture(config, sender, metrics);
    f.channel.pipeline().addLast(f.ingress.newHandler());
    return f;
  }

  /** The channel holds the whole pipeline of an accepted connection: it reads and writes bytes. */
  static IngressFixture fullPipeline(
      RelayConfig config, ScriptedSender sender, RelayMetrics metrics) throws IOException {
    IngressFixture f = new IngressFixture(config, sender, metrics);
    f.ingress.initChannel(f.channel);
    return f;
  }
}
