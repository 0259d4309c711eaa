package io.prwrelay.server.queue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Semaphore;

/**
 * Run in a child JVM by {@link QueueKillTest}: appends records {@code 0, 1, 2, ...} to tenant "t"
 * of the queue in {@code args[0]}, up to 16 in flight, and prints {@code acked <id>} once each is
 * on disk, until it is killed.
 */
public final class QueueKillChild {
  private QueueKillChild() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    QueueStore store = QueueStore.open(Path.of(args[0]), QueueLimits.DEFAULTS, QueueListener.NONE);
    FileTenantQueue q = store.queue("t");
    Semaphore inFlight = new Semaphore(16);
    out.println("ready");
    for (long id = 0; ; id++) {
      inFlight.acquire();
      ByteBuf payload = PooledByteBufAllocator.DEFAULT.buffer(16);
      payload.writeCharSequence(Long.toString(id), StandardCharsets.US_ASCII);
      long acked = id;
      q.append(payload, 1, System.currentTimeMillis())
          .whenComplete(
              (v, e) -> {
                if (e == null) {
                  synchronized (out) {
                    out.println("acked " + acked);
                  }
                }
                inFlight.release();
              });
      payload.release();
    }
  }
}
