package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.QueueTesting.T0;
import static io.prwrelay.server.queue.QueueTesting.payload;
import static io.prwrelay.server.queue.QueueTesting.texts;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.prwrelay.server.downstream.SimulatedLoop;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a lane relies on from its {@link TenantQueue}, checked on the file queue and on its
 * in-memory twin alike, so that lane tests over the twin say something about the relay: order,
 * reads that do not consume, the read limits, cumulative acknowledgement, and {@code ackFrom}
 * refusing to jump an older record.
 */
class TenantQueueContractTest {
  /** The checks; each implementation says how to make a queue and wait for an answer. */
  abstract static class Contract {
    abstract TenantQueue queue(String tenant) throws Exception;

    /** The future's value once the implementation has answered it. */
    abstract <T> T answer(CompletableFuture<T> future) throws Exception;

    private TenantQueue.Position append(TenantQueue q, String text, int series, boolean v2)
        throws Exception {
      ByteBuf p = payload(text);
      try {
        return answer(q.appendAt(p, series, v2, T0));
      } finally {
        p.release();
      }
    }

    /** Tenant t's queue holding one PRW 1.0 record of one series per text, in order. */
    private TenantQueue queueWith(String... texts) throws Exception {
      TenantQueue q = queue("t");
      for (String text : texts) {
        append(q, text, 1, false);
      }
      return q;
    }

    private List<QueuedRecord> read(TenantQueue q, int maxRecords, long maxBytes) throws Exception {
      return answer(q.read(maxRecords, maxBytes, PooledByteBufAllocator.DEFAULT));
    }

    @Test
    void recordsAreReadBackInAppendOrderWithTheirSeriesAndProtocolWithoutBeingConsumed()
        throws Exception {
      TenantQueue q = queue("t");
      assertTrue(q.isEmpty());
      append(q, "r1", 3, false);
      append(q, "r2", 5, true);
      assertEquals(2, q.records());
      assertFalse(q.isEmpty());
      List<QueuedRecord> first = read(q, 10, Long.MAX_VALUE);
      assertEquals(List.of(3, 5), first.stream().map(QueuedRecord::series).toList());
      assertEquals(List.of(false, true), first.stream().map(QueuedRecord::remoteWrite2).toList());
      assertEquals(List.of("r1", "r2"), texts(first));
      assertEquals(List.of("r1", "r2"), texts(read(q, 10, Long.MAX_VALUE)), "read again");
      assertEquals(2, q.records());
    }

    @Test
    void readStopsAtItsRecordAndByteLimitsButAlwaysReturnsTheFirstRecord() throws Exception {
      TenantQueue q = queueWith("aaaa", "bbbb", "cccc");
      assertEquals(List.of("aaaa", "bbbb"), texts(read(q, 2, Long.MAX_VALUE)));
      assertEquals(List.of("aaaa", "bbbb"), texts(read(q, 10, 8)));
      assertEquals(List.of("aaaa"), texts(read(q, 10, 7)));
      assertEquals(List.of("aaaa"), texts(read(q, 10, 1)), "the first whatever its size");
    }

    @Test
    void ackConsumesEveryRecordUpToTheLatestGiven() throws Exception {
      TenantQueue q = queueWith("r1", "r2", "r3");
      List<QueuedRecord> two = read(q, 2, Long.MAX_VALUE);
      answer(q.ack(two.subList(1, 2)));
      texts(two);
      assertEquals(1, q.records());
      assertEquals(List.of("r3"), texts(read(q, 10, Long.MAX_VALUE)));
      answer(q.ack(List.of()));
      assertEquals(1, q.records());
    }

    @Test
    void aQueueIsCreatedByItsFirstAppendAndStaysCreatedOnceDrained() throws Exception {
      TenantQueue q = queue("t");
      assertFalse(q.created(), "a tenant never queued for");
      append(q, "r1", 1, false);
      assertTrue(q.created());
      List<QueuedRecord> head = read(q, 1, Long.MAX_VALUE);
      answer(q.ack(head));
      texts(head);
      assertTrue(q.isEmpty());
      assertTrue(q.created(), "drained, still known");
    }

    @Test
    void ackFromConsumesOnlyWhenNoOlderRecordIsStillQueued() throws Exception {
      TenantQueue q = queue("t");
      append(q, "r1", 1, false);
      TenantQueue.Position second = append(q, "r2", 1, false);
      TenantQueue.Position third = append(q, "r3", 1, false);
      assertFalse(answer(q.ackFrom(second, third)), "r1 is still queued");
      assertEquals(3, q.records());
      List<QueuedRecord> head = read(q, 1, Long.MAX_VALUE);
      answer(q.ack(head));
      texts(head);
      assertTrue(answer(q.ackFrom(second, third)));
      assertTrue(q.isEmpty());
      assertTrue(answer(q.ackFrom(second, third)), "already gone");
    }
  }

  @Nested
  class OnDisk extends Contract {
    @TempDir Path dir;
    private QueueStore store;

    @Override
    TenantQueue queue(String tenant) throws Exception {
      store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE);
      return store.queue(tenant);
    }

    @Override
    <T> T answer(CompletableFuture<T> future) throws Exception {
      return QueueTesting.get(future);
    }

    @AfterEach
    void close() {
      store.close();
    }
  }

  @Nested
  class InMemory extends Contract {
    private final SimulatedLoop sim = new SimulatedLoop();

    @Override
    TenantQueue queue(String tenant) {
      return new InMemoryTenantQueues(sim.loop()).queue(tenant);
    }

    @Override
    <T> T answer(CompletableFuture<T> future) {
      assertFalse(future.isDone(), "answered on the loop, not on the caller's thread");
      sim.runDue();
      assertTrue(future.isDone(), "answered once the loop ran");
      return future.join();
    }

    @AfterEach
    void close() {
      assertFalse(sim.channel().finishAndReleaseAll());
    }
  }
}
