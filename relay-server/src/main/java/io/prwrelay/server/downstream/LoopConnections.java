package io.prwrelay.server.downstream;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The downstream connections of one event loop and the attempts made on them. Touched only on the
 * loop, so nothing here locks.
 *
 * <ul>
 *   <li>At most {@code max} connections are in use or being opened at once (the loop's share of
 *       {@code relay.downstream.max-connections}); attempts beyond that wait for one, in order.
 *   <li>Idle keep-alive connections wait on a stack, the most recently used on top; one found
 *       closed is dropped when its turn comes.
 *   <li>Deadlines: every attempt not completed yet is in one list, and one timer, set for the
 *       earliest deadline among them, completes those whose deadline has passed. Attempts of one
 *       loop mostly share a timeout, so each new one usually ends later than the timer and costs
 *       nothing but its place in the list.
 * </ul>
 */
final class LoopConnections {
  final EventLoop loop;
  final RequestHead head;
  private final Bootstrap bootstrap;
  private final int max;

  private final ArrayDeque<ResponseHandler> idle = new ArrayDeque<>();
  private final ArrayDeque<Attempt> waiting = new ArrayDeque<>();

  /** Attempts not completed yet; each knows its {@link Attempt#index} here. */
  private final List<Attempt> open = new ArrayList<>();

  /** Every connection open or being opened, for {@link #close()}. */
  private final List<Channel> channels = new ArrayList<>();

  /** Connections in use or being opened. */
  private int busy;

  private ScheduledFuture<?> timer;
  private long timerAt;
  private final Runnable expire = this::expire;
  private boolean closed;

  /**
   * @param bootstrap opens a connection of {@code loop}, its pipeline ending in a {@link
   *     ResponseHandler}
   * @param max connections of this loop
   */
  LoopConnections(EventLoop loop, Bootstrap bootstrap, RequestHead head, int max) {
    this.loop = loop;
    this.bootstrap = bootstrap;
    this.head = head;
    this.max = max;
  }

  int max() {
    return max;
  }

  /** Starts {@code attempt} on a free connection, a new one, or after those ahead of it. */
  void send(Attempt attempt) {
    attempt.index = open.size();
    open.add(attempt);
    armTimer(attempt.deadlineNanos);
    if (closed) {
      attempt.fail("the relay is shutting down");
    } else if (busy < max && waiting.isEmpty()) {
      take(attempt);
    } else {
      waiting.add(attempt);
    }
  }

  /** A connection is free for {@code attempt}: an idle one, else a new one. */
  private void take(Attempt attempt) {
    busy++;
    ResponseHandler c;
    while ((c = idle.pollFirst()) != null) {
      if (c.channel().isActive()) {
        attempt.start(c);
        return;
      }
    }
    connect(attempt);
  }

  private void connect(Attempt attempt) {
    ChannelFuture f = bootstrap.connect();
    Channel ch = f.channel();
    channels.add(ch);
    ch.closeFuture().addListener(x -> channels.remove(ch));
    f.addListener(
        x -> {
          if (!f.isSuccess()) {
            busy--;
            attempt.fail(
                "cannot connect to the downstream: " + DownstreamClient.describe(f.cause()));
            next();
            return;
          }
          ResponseHandler c = f.channel().pipeline().get(ResponseHandler.class);
          if (attempt.isDone()) {
            // Completed (timed out, shut down) while connecting: the connection serves the next.
            free(c, true);
          } else {
            attempt.start(c);
          }
        });
  }

  /**
   * {@code attempt} completed: it leaves the list, and its connection (if it had one) goes back to
   * the idle stack or to the next waiting attempt, or is closed.
   */
  void finished(Attempt attempt, ResponseHandler connection, boolean reuse) {
    int i = attempt.index;
    if (i >= 0) {
      Attempt last = open.remove(open.size() - 1);
      if (last != attempt) {
        open.set(i, last);
        last.index = i;
      }
      attempt.index = -1;
    }
    if (connection != null) {
      connection.end();
      free(connection, reuse);
    } else if (!waiting.isEmpty()) {
      waiting.remove(attempt);
    }
  }

  private void free(ResponseHandler c, boolean reuse) {
    busy--;
    if (reuse && !closed && c.channel().isActive()) {
      idle.addFirst(c);
    } else {
      c.channel().close();
    }
    next();
  }

  /** Starts waiting attempts while connections are free. */
  private void next() {
    Attempt a;
    while (busy < max && (a = waiting.poll()) != null) {
      take(a);
    }
  }

  private void armTimer(long deadline) {
    if (timer != null) {
      if (deadline - timerAt >= 0) {
        return;
      }
      timer.cancel(false);
    }
    timerAt = deadline;
    timer = loop.schedule(expire, deadline - loop.ticker().nanoTime(), TimeUnit.NANOSECONDS);
  }

  /** Completes every attempt past its deadline; sets the timer for the next deadline. */
  private void expire() {
    timer = null;
    long now = loop.ticker().nanoTime();
    for (int i = open.size() - 1; i >= 0; i--) {
      if (i < open.size()) {
        open.get(i).expireAt(now);
      }
    }
    long next = 0;
    boolean any = false;
    for (Attempt a : open) {
      if (!any || a.deadlineNanos - next < 0) {
        next = a.deadlineNanos;
        any = true;
      }
    }
    if (any) {
      armTimer(next);
    }
  }

  /**
   * Completes every attempt not completed yet with a transport failure and closes every connection;
   * later attempts fail at once. On the loop.
   *
   * @return the connections' close futures
   */
  List<ChannelFuture> close() {
    closed = true;
    for (Attempt a : List.copyOf(open)) {
      a.fail("the relay is shutting down");
    }
    idle.clear();
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
    List<ChannelFuture> closes = new ArrayList<>(channels.size());
    for (Channel ch : List.copyOf(channels)) {
      closes.add(ch.close());
    }
    return closes;
  }
}
