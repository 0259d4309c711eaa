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
  private final MockTicker ticker;
  private final EmbeddedChannel channel;

  public SimulatedLoop(ChannelHandler... handlers) {
    this(Ticker.newMockTicker(), handlers);
  }

  /**
   * A loop on the same clock as {@code other}; move both with {@link #advance(Duration,
   * SimulatedLoop...)}.
   */
  public SimulatedLoop(SimulatedLoop other) {
    this(other.ticker);
  }

  private SimulatedLoop(MockTicker ticker, ChannelHandler... handlers) {
    this.ticker = ticker;
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

  /**
   * Runs every task of loops on one clock that is due now, including those that running them makes
   * due on any of them.
   */
  public static void runDue(SimulatedLoop... loops) {
    boolean ran = true;
    while (ran) {
      ran = false;
      for (SimulatedLoop l : loops) {
        if (l.channel.hasPendingTasks()) {
          l.runDue();
          ran = true;
        }
      }
    }
  }

  /**
   * Moves the clock that {@code loops} share forward by {@code d}, running each loop's scheduled
   * tasks at their time, in time order across the loops.
   */
  public static void advance(Duration d, SimulatedLoop... loops) {
    MockTicker ticker = loops[0].ticker;
    long target = ticker.nanoTime() + d.toNanos();
    while (true) {
      long next;
      boolean pending;
      do {
        next = -1;
        for (SimulatedLoop l : loops) {
          long n = l.channel.runScheduledPendingTasks();
          if (n >= 0 && (next < 0 || n < next)) {
            next = n;
          }
        }
        pending = false;
        for (SimulatedLoop l : loops) {
          pending |= l.channel.hasPendingTasks();
        }
        runDue(loops);
      } while (pending);
      if (next < 0 || ticker.nanoTime() + next > target) {
        break;
      }
      ticker.advance(next, TimeUnit.NANOSECONDS);
    }
    ticker.advance(target - ticker.nanoTime(), TimeUnit.NANOSECONDS);
    runDue(loops);
  }
}
