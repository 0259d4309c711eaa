package io.prwrelay.server.downstream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
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
  private int inFlight;
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
    Call call =
        new Call(
            tenant,
            loop.ticker().nanoTime(),
            timeoutNanos,
            decompress(body),
            protocol,
            loop,
            retryAttempt);
    calls.add(call);
    Reply reply = null;
    for (Map.Entry<String, Reply> m : byMarker.getOrDefault(tenant, Map.of()).entrySet()) {
      if (call.text().contains(m.getKey())) {
        reply = m.getValue();
      }
    }
    if (reply == null) {
      reply = scripts.getOrDefault(tenant, new ArrayDeque<>()).poll();
    }
    if (reply == null) {
      reply = always.getOrDefault(tenant, Reply.status(200));
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
          synchronized (this) {
            inFlight--;
          }
          promise.setSuccess(outcome);
        },
        Math.min(delay, timeoutNanos),
        TimeUnit.NANOSECONDS);
    return promise;
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

  /** Most attempts that were in flight at once. */
  public synchronized int maxInFlight() {
    return maxInFlight;
  }
}
