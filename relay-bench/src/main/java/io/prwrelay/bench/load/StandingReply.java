package io.prwrelay.bench.load;

import io.prwrelay.testkit.ScriptedDownstream;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import io.prwrelay.testkit.ScriptedDownstream.TenantCount;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Makes the sink answer every request of one tenant with the same reply for as long as it is open.
 * The sink's scripts are queues of replies, one used per request: this keeps the tenant's queue
 * ahead of the requests it answered, topping it up every 50 ms by {@value #BATCH} replies whenever
 * fewer than half that many are left.
 */
final class StandingReply implements AutoCloseable {
  private static final int BATCH = 10_000;

  private final ScriptedDownstream sink;
  private final String tenant;
  private final Reply[] batch;
  private final ScheduledExecutorService timer;
  private long scripted;

  /** Starts answering {@code tenant}'s requests to {@code sink} with {@code reply}. */
  StandingReply(ScriptedDownstream sink, String tenant, Reply reply) {
    this.sink = sink;
    this.tenant = tenant;
    this.batch = new Reply[BATCH];
    Arrays.fill(batch, reply);
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "loadgen-standing-reply");
              t.setDaemon(true);
              return t;
            });
    topUp();
    timer.scheduleWithFixedDelay(this::topUp, 50, 50, TimeUnit.MILLISECONDS);
  }

  private synchronized void topUp() {
    TenantCount c = sink.counts().get(tenant);
    long answered = c == null ? 0 : c.answers().values().stream().mapToLong(Long::longValue).sum();
    while (scripted - answered < BATCH / 2) {
      sink.script(tenant, batch);
      scripted += BATCH;
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
