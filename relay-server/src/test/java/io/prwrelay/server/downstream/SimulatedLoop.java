package io.prwrelay.server.downstream;

import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.MockTicker;
import io.netty.util.concurrent.Ticker;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * An {@link EmbeddedChannel} whose event loop runs on simulated time: nothing happens until the
 * test moves the clock, and every scheduled task then runs at its own time, in order.
 */
public final class SimulatedLoop {
  private final MockTicker ticker = Ticker.newMockTicker();
  private final EmbeddedChannel channel;

  public SimulatedLoop(ChannelHandler... handlers) {
    channel = EmbeddedChannel.builder().ticker(ticker).handlers(handlers).build();
  }

  public EmbeddedChannel channel() {
    return channel;
  }

  public EventLoop loop() {
    return channel.eventLoop();
  }

  /** Simulated time, in nanoseconds since the start. */
  public long now() {
    return ticker.nanoTime();
  }

  /** Runs every task that is due now, including those that running them makes due. */
  public void runDue() {
    channel.runPendingTasks();
    while (channel.hasPendingTasks()) {
      channel.runPendingTasks();
    }
  }

  /** Moves the clock forward by {@code d}, running each scheduled task at its time. */
  public void advance(Duration d) {
    long target = now() + d.toNanos();
    runDue();
    long next;
    while ((next = channel.runScheduledPendingTasks()) >= 0 && now() + next <= target) {
      ticker.advance(next, TimeUnit.NANOSECONDS);
      runDue();
    }
    ticker.advance(target - now(), TimeUnit.NANOSECONDS);
    runDue();
  }
}
