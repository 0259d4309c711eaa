package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.prwrelay.server.protocol.Protocol;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.xerial.snappy.Snappy;

/**
 * A {@link TenantSender} that plays scripted replies per tenant on the caller's event loop (a
 * {@link SimulatedLoop}, or a real loop): each reply is an outcome that arrives after a delay, or —
 * when the delay reaches the attempt's timeout — a transport failure at the timeout, as the real
 * client reports it. A tenant without a script (or {@link #always} reply) is answered 200 at once.
 * As the real client, a loop has at most {@link #connections(int)} attempts on the wire; the others
 * wait for one, their timeout running ({@code TenantSenderContractTest} holds both to this).
 * Records every call with its decompressed body, and every call whose borrowed body had already
 * been released.
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

  /**
   * One call of {@link #send}.
   *
   * @param body the batch as sent, decompressed
   * @param protocol the protocol it was sent as
   * @param loop the event loop it was sent from
   * @param retryAttempt the {@code Retry-Attempt} it was sent with (0: none)
   */
  public record Call(
      String tenant,
      long atNanos,
      long timeoutNanos,
      byte[] body,
      Protocol protocol,
      EventLoop loop,
      int retryAttempt) {
    /** The decompressed body as text (for tests whose batches are text). */
    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  private final Map<String, ArrayDeque<Reply>> scripts = new HashMap<>();
  private final Map<String, Reply> always = new HashMap<>();
  private final Map<String, Map<String, Reply>> byMarker = new HashMap<>();
  private final List<Call> calls = new ArrayList<>();
  private final List<String> releasedBodies = new ArrayList<>();
  private final Map<EventLoop, Integer> inFlight = new HashMap<>();
  private final Map<EventLoop, ArrayDeque<Attempt>> waiting = new HashMap<>();
  private int totalInFlight;
  private int maxInFlight;
  private int connections = Integer.MAX_VALUE;

  /** How many attempts the loop can have on the wire at once, as a pooled client reports it. */
  public synchronized ScriptedSender connections(int n) {
    connections = n;
    return this;
  }

  @Override
  public synchronized int connections(EventLoop loop) {
    return connections;
  }

  /** Appends replies to {@code tenant}'s script. */
  public synchronized ScriptedSender script(String tenant, Reply... replies) {
    ArrayDeque<Reply> q = scripts.computeIfAbsent(tenant, t -> new ArrayDeque<>());
    q.addAll(List.of(replies));
    return this;
  }

  /** The reply for every call of {@code tenant} once its script is used up. */
  public synchronized ScriptedSender always(String tenant, Reply reply) {
    always.put(tenant, reply);
    return this;
  }

  /**
   * Answers {@code reply} to every call of {@code tenant} whose decompressed body contains {@code
   * marker}, before its script (which such a call leaves alone): a downstream that rejects any
   * request carrying a bad series, whatever else the request carries.
   */
  public synchronized ScriptedSender whenBodyContains(String tenant, String marker, Reply reply) {
    byMarker.computeIfAbsent(tenant, t -> new LinkedHashMap<>()).put(marker, reply);
    return this;
  }

  /** The same reply {@code times} times. */
  public synchronized ScriptedSender repeat(String tenant, Reply reply, int times) {
    for (int i = 0; i < times; i++) {
      script(tenant, reply);
    }
    return this;
  }

  @Override
  public Future<AttemptOutcome> send(
      EventLoop loop, String tenant, ByteBuf body, long timeoutNanos) {
    return send(loop, tenant, Protocol.V1, body, timeoutNanos);
  }

  @Override
  public Future<AttemptOutcome> send(
      EventLoop loop, String tenant, Protocol protocol, ByteBuf body, long timeoutNanos) {
    return send(loop, tenant, protocol, 0, body, timeoutNanos);
  }

  @Override
  public synchronized Future<AttemptOutcome> send(
      EventLoop loop,
      String tenant,
      Protocol protocol,
      int retryAttempt,
      ByteBuf body,
      long timeoutNanos) {
    if (body.refCnt() <= 0) {
      releasedBodies.add(tenant);
    }
    long now = loop.ticker().nanoTime();
    Attempt attempt =
        new Attempt(
            loop,
            tenant,
            protocol,
            retryAttempt,
            body,
            timeoutNanos,
            now + timeoutNanos,
            loop.newPromise());
    if (inFlight.getOrDefault(loop, 0) < connections) {
      start(attempt, now);
    } else {
      // As the real client: it waits for one of the loop's connections, its timeout running.
      waiting.computeIfAbsent(loop, l -> new ArrayDeque<>()).add(attempt);
      loop.schedule(() -> expireWaiting(attempt), timeoutNanos, TimeUnit.NANOSECONDS);
    }
    return attempt.promise;
  }

  /** An attempt made and not yet on the wire, or on it. */
  private record Attempt(
      EventLoop loop,
      String tenant,
      Protocol protocol,
      int retryAttempt,
      ByteBuf body,
      long timeoutNanos,
      long deadlineNanos,
      Promise<AttemptOutcome> promise) {}

  /** Puts {@code a} on the wire: records the call and plays the tenant's next reply. */
  private void start(Attempt a, long now) {
    Call call =
        new Call(
            a.tenant, now, a.timeoutNanos, decompress(a.body), a.protocol, a.loop, a.retryAttempt);
    calls.add(call);
    Reply reply = null;
    for (Map.Entry<String, Reply> m : byMarker.getOrDefault(a.tenant, Map.of()).entrySet()) {
      if (call.text().contains(m.getKey())) {
        reply = m.getValue();
      }
    }
    if (reply == null) {
      reply = scripts.getOrDefault(a.tenant, new ArrayDeque<>()).poll();
    }
    if (reply == null) {
      reply = always.getOrDefault(a.tenant, Reply.status(200));
    }
    inFlight.merge(a.loop, 1, Integer::sum);
    totalInFlight++;
    maxInFlight = Math.max(maxInFlight, totalInFlight);
    long left = a.deadlineNanos - now;
    long delay = reply.delay().toNanos();
    AttemptOutcome outcome = delay < left ? reply.outcome() : timedOut(a);
    a.loop.schedule(
        () -> {
          synchronized (this) {
            inFlight.merge(a.loop, -1, Integer::sum);
            totalInFlight--;
            startWaiting(a.loop);
          }
          a.promise.setSuccess(outcome);
        },
        Math.min(delay, left),
        TimeUnit.NANOSECONDS);
  }

  private static AttemptOutcome timedOut(Attempt a) {
    return AttemptOutcome.transport(
        "no response within " + TimeUnit.NANOSECONDS.toMillis(a.timeoutNanos) + " ms");
  }

  /** Starts the attempts that wait for a connection of {@code loop}, while there is one. */
  private void startWaiting(EventLoop loop) {
    ArrayDeque<Attempt> q = waiting.get(loop);
    while (q != null && !q.isEmpty() && inFlight.getOrDefault(loop, 0) < connections) {
      start(q.poll(), loop.ticker().nanoTime());
    }
  }

  /** Ends {@code a} at its deadline if it is still waiting for a connection. */
  private void expireWaiting(Attempt a) {
    boolean expired;
    synchronized (this) {
      ArrayDeque<Attempt> q = waiting.get(a.loop);
      expired = q != null && q.remove(a);
    }
    if (expired) {
      a.promise.setSuccess(timedOut(a));
    }
  }

  private static byte[] decompress(ByteBuf body) {
    if (body.refCnt() <= 0) {
      return new byte[0];
    }
    byte[] compressed = new byte[body.readableBytes()];
    body.getBytes(body.readerIndex(), compressed);
    try {
      return Snappy.uncompress(compressed);
    } catch (IOException e) {
      throw new AssertionError("a batch that is not valid snappy", e);
    }
  }

  public synchronized List<Call> calls() {
    return List.copyOf(calls);
  }

  /** The calls for {@code tenant}, in order. */
  public synchronized List<Call> callsTo(String tenant) {
    return calls.stream().filter(c -> c.tenant().equals(tenant)).toList();
  }

  /** Times of the calls for {@code tenant}, in milliseconds of simulated time. */
  public synchronized List<Long> callMillis(String tenant) {
    List<Long> times = new ArrayList<>();
    for (Call c : calls) {
      if (c.tenant().equals(tenant)) {
        times.add(TimeUnit.NANOSECONDS.toMillis(c.atNanos()));
      }
    }
    return times;
  }

  /** Tenants of the calls that were handed an already released body (should be none). */
  public synchronized List<String> releasedBodies() {
    return releasedBodies;
  }

  /** Most attempts that were on the wire at once, all loops together. */
  public synchronized int maxInFlight() {
    return maxInFlight;
  }
}
