package io.prwrelay.server.lane;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.prwrelay.core.codec.CodecException;
import io.prwrelay.core.codec.SnappyCodec;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.TenantSender;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A downstream for lane tests: answers each tenant's sends from a script (default 200), after a
 * scripted delay on the simulated clock, and records what each send carried (decompressed).
 */
final class ScriptedSender implements TenantSender {
  /** One scripted answer; {@code delayMillis < 0} never answers (the attempt times out). */
  record Reply(int status, long retryAfterMillis, long delayMillis) {
    static Reply ok() {
      return new Reply(200, -1, 0);
    }

    static Reply status(int status) {
      return new Reply(status, -1, 0);
    }

    static Reply retryAfter(int status, long millis) {
      return new Reply(status, millis, 0);
    }

    static Reply after(long delayMillis, int status) {
      return new Reply(status, -1, delayMillis);
    }
  }

  /** One send as the downstream saw it. */
  record Sent(String tenant, String body, long atNanos, long timeoutNanos) {}

  private final Map<String, ArrayDeque<Reply>> scripts = new HashMap<>();
  private final Map<String, Reply> always = new HashMap<>();
  final List<Sent> sent = Collections.synchronizedList(new ArrayList<>());
  int inFlight;
  int maxInFlight;

  synchronized ScriptedSender script(String tenant, Reply... replies) {
    ArrayDeque<Reply> q = scripts.computeIfAbsent(tenant, t -> new ArrayDeque<>());
    q.addAll(List.of(replies));
    return this;
  }

  synchronized ScriptedSender always(String tenant, Reply reply) {
    always.put(tenant, reply);
    return this;
  }

  List<Sent> sentTo(String tenant) {
    return List.copyOf(sent).stream().filter(s -> s.tenant().equals(tenant)).toList();
  }

  @Override
  public synchronized Future<AttemptOutcome> send(
      EventLoop loop, String tenant, ByteBuf body, long timeoutNanos) {
    ByteBuf plain;
    try {
      plain = SnappyCodec.decode(body, Unpooled.buffer().alloc(), 1 << 24);
    } catch (CodecException e) {
      throw new AssertionError(e);
    }
    String text = plain.toString(StandardCharsets.UTF_8);
    plain.release();
    sent.add(new Sent(tenant, text, loop.ticker().nanoTime(), timeoutNanos));
    ArrayDeque<Reply> q = scripts.get(tenant);
    Reply r = q != null && !q.isEmpty() ? q.poll() : always.getOrDefault(tenant, Reply.ok());
    Promise<AttemptOutcome> p = loop.newPromise();
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    long wait =
        r.delayMillis() < 0 ? Long.MAX_VALUE : TimeUnit.MILLISECONDS.toNanos(r.delayMillis());
    if (wait > timeoutNanos) {
      loop.schedule(
          () -> {
            inFlight--;
            p.setSuccess(
                new AttemptOutcome(
                    AttemptOutcome.TRANSPORT_FAILURE,
                    "no response within the attempt timeout",
                    -1));
          },
          timeoutNanos,
          TimeUnit.NANOSECONDS);
    } else {
      Runnable answer =
          () -> {
            inFlight--;
            p.setSuccess(
                new AttemptOutcome(r.status(), "scripted " + r.status(), r.retryAfterMillis()));
          };
      if (wait == 0) {
        loop.execute(answer);
      } else {
        loop.schedule(answer, wait, TimeUnit.NANOSECONDS);
      }
    }
    return p;
  }
}
