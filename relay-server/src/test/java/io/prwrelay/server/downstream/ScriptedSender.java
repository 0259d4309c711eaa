package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@link TenantSender} that plays scripted replies per tenant on the caller's event loop (use a
 * {@link SimulatedLoop}): each reply is an outcome that arrives after a delay, or — when the delay
 * reaches the attempt's timeout — a transport failure at the timeout, as the real client reports
 * it. A tenant without a script is answered 200 at once. Records every call, and every call whose
 * borrowed body had already been released.
 */
public final class ScriptedSender implements TenantSender {
  /** One scripted reply. */
  public record Reply(AttemptOutcome outcome, Duration delay) {
    public static Reply status(int status) {
      return new Reply(new AttemptOutcome(status, "", -1), Duration.ZERO);
    }

    public static Reply status(int status, String message) {
      return new Reply(new AttemptOutcome(status, message, -1), Duration.ZERO);
    }

    public static Reply retryAfter(int status, Duration retryAfter) {
      return new Reply(
          new AttemptOutcome(status, "slow down", retryAfter.toMillis()), Duration.ZERO);
    }

    public static Reply transport(String message) {
      return new Reply(AttemptOutcome.transport(message), Duration.ZERO);
    }

    /** No answer: the attempt times out. */
    public static Reply silence() {
      return new Reply(null, Duration.ofDays(1));
    }

    /** The same outcome, arriving after {@code delay}. */
    public Reply after(Duration delay) {
      return new Reply(outcome, delay);
    }
  }

  /** One call of {@link #send}. */
  public record Call(String tenant, long atNanos, long timeoutNanos) {}

  private final Map<String, ArrayDeque<Reply>> scripts = new HashMap<>();
  private final List<Call> calls = new ArrayList<>();
  private final List<String> releasedBodies = new ArrayList<>();
  private int inFlight;
  private int maxInFlight;

  /** Appends replies to {@code tenant}'s script. */
  public ScriptedSender script(String tenant, Reply... replies) {
    ArrayDeque<Reply> q = scripts.computeIfAbsent(tenant, t -> new ArrayDeque<>());
    q.addAll(List.of(replies));
    return this;
  }

  /** The same reply {@code times} times. */
  public ScriptedSender repeat(String tenant, Reply reply, int times) {
    for (int i = 0; i < times; i++) {
      script(tenant, reply);
    }
    return this;
  }

  @Override
  public Future<AttemptOutcome> send(
      EventLoop loop, String tenant, ByteBuf body, long timeoutNanos) {
    if (body.refCnt() <= 0) {
      releasedBodies.add(tenant);
    }
    calls.add(new Call(tenant, loop.ticker().nanoTime(), timeoutNanos));
    Reply reply = scripts.getOrDefault(tenant, new ArrayDeque<>()).poll();
    if (reply == null) {
      reply = Reply.status(200);
    }
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    Promise<AttemptOutcome> promise = loop.newPromise();
    long delay = reply.delay().toNanos();
    AttemptOutcome outcome =
        delay < timeoutNanos
            ? reply.outcome()
            : AttemptOutcome.transport(
                "no response within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
    loop.schedule(
        () -> {
          inFlight--;
          promise.setSuccess(outcome);
        },
        Math.min(delay, timeoutNanos),
        TimeUnit.NANOSECONDS);
    return promise;
  }

  public List<Call> calls() {
    return calls;
  }

  /** Times of the calls for {@code tenant}, in milliseconds of simulated time. */
  public List<Long> callMillis(String tenant) {
    List<Long> times = new ArrayList<>();
    for (Call c : calls) {
      if (c.tenant().equals(tenant)) {
        times.add(TimeUnit.NANOSECONDS.toMillis(c.atNanos()));
      }
    }
    return times;
  }

  /** Tenants of the calls that were handed an already released body (should be none). */
  public List<String> releasedBodies() {
    return releasedBodies;
  }

  /** Most attempts that were in flight at once. */
  public int maxInFlight() {
    return maxInFlight;
  }
}
