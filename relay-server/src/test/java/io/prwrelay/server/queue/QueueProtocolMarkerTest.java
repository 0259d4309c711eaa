package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.QueueTesting.T0;
import static io.prwrelay.server.queue.QueueTesting.append;
import static io.prwrelay.server.queue.QueueTesting.get;
import static io.prwrelay.server.queue.QueueTesting.payload;
import static io.prwrelay.server.queue.QueueTesting.segmentFiles;
import static io.prwrelay.server.queue.QueueTesting.texts;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each queued record says which Remote Write protocol its payload is, across restarts, and records
 * of format version 1 segments (written before the marker existed) read as Remote Write 1.0.
 */
class QueueProtocolMarkerTest {
  @TempDir Path tmp;

  private static void appendV2(FileTenantQueue q, String text, int series) throws Exception {
    ByteBuf p = payload(text);
    try {
      get(q.append(p, series, true, T0));
    } finally {
      p.release();
    }
  }

  private static List<QueuedRecord> readAll(FileTenantQueue q) throws Exception {
    return get(q.read(Integer.MAX_VALUE, Long.MAX_VALUE, PooledByteBufAllocator.DEFAULT));
  }

  @Test
  void recordsKeepTheirProtocolAndSeriesCountAcrossARestart() throws Exception {
    Path dir = tmp.resolve("q");
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      FileTenantQueue q = store.queue("t");
      append(q, "one", 3, T0);
      appendV2(q, "two", 5);
      append(q, "three", 7, T0);
    }
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      FileTenantQueue q = store.queue("t");
      assertEquals(15, q.series(), "the marker is not counted as series");
      List<QueuedRecord> records = readAll(q);
      List<Boolean> v2 = new ArrayList<>();
      List<Integer> series = new ArrayList<>();
      for (QueuedRecord r : records) {
        v2.add(r.remoteWrite2());
        series.add(r.series());
      }
      assertEquals(List.of("one", "two", "three"), texts(records));
      assertEquals(List.of(false, true, false), v2);
      assertEquals(List.of(3, 5, 7), series);
    }
  }

  @Test
  void segmentOfFormatVersion1IsReadAsRemoteWrite1() throws Exception {
    Path dir = tmp.resolve("q");
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      append(store.queue("t"), "old", 2, T0);
    }
    Path seg = segmentFiles(dir.resolve("t")).get(0);
    try (FileChannel ch = FileChannel.open(seg, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(4).putInt(0, 1), 4);
    }
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      List<QueuedRecord> records = readAll(store.queue("t"));
      assertEquals(1, records.size());
      assertFalse(records.get(0).remoteWrite2());
      assertEquals(2, records.get(0).series());
      assertEquals(List.of("old"), texts(records));
    }
  }
}
