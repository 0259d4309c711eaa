package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.QueueTesting.T0;
import static io.prwrelay.server.queue.QueueTesting.append;
import static io.prwrelay.server.queue.QueueTesting.peekAll;
import static io.prwrelay.server.queue.QueueTesting.take;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.prwrelay.server.queue.QueueTesting.RecordingListener;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The byte bounds of {@link QueueLimits} under each {@link QueueFullPolicy}: by default a record
 * that does not fit is refused and nothing queued is dropped; under drop-oldest a tenant makes room
 * from its own records only, never from another tenant's.
 */
class QueueBoundsTest {
  private static final int TEN = RecordLayout.recordBytes(10);

  @TempDir Path dir;

  private final RecordingListener listener = new RecordingListener();

  private QueueStore open(QueueLimits limits) throws IOException {
    return QueueStore.open(dir, limits, listener);
  }

  /** {@code count} 10-byte records: {@code prefix} and a number. */
  private static List<String> records(String prefix, int count) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      out.add(String.format("%s%0" + (10 - prefix.length()) + "d", prefix, i));
    }
    return out;
  }

  private static void appendAll(FileTenantQueue q, List<String> texts) throws Exception {
    for (String t : texts) {
      append(q, t, 1, T0);
    }
  }

  @Test
  void atTheTotalBoundManySmallTenantsAreRefusedAndTheLargeQueueKeepsEveryRecord()
      throws Exception {
    try (QueueStore store = open(QueueLimits.DEFAULTS.withTotalMaxBytes(20L * TEN))) {
      List<String> innocent = records("in", 12);
      appendAll(store.queue("innocent"), innocent);
      int refused = 0;
      for (int t = 0; t < 8; t++) {
        FileTenantQueue small = store.queue("small" + t);
        for (String r : records("s" + t, 2)) {
          try {
            append(small, r, 1, T0);
          } catch (QueueFullException e) {
            refused++;
            assertEquals("small" + t, e.tenant());
            assertEquals(QueueFullException.Bound.TOTAL_BYTES, e.bound());
            assertEquals(20L * TEN, e.limit());
            assertEquals(
                "all tenants' queues hold 600 bytes; a record of 30 more would pass the bound of"
                    + " 600 bytes",
                e.getMessage());
          }
        }
      }
      assertEquals(8, refused, "16 small records, room for 8");
      assertEquals(innocent, peekAll(store.queue("innocent")), "nothing acknowledged is dropped");
      assertEquals(20L * TEN, store.bytes());
      assertEquals(List.of(), List.copyOf(listener.drops.keySet()));
      take(store.queue("innocent"), 1);
      append(store.queue("small7"), "after-take", 1, T0);
      assertEquals(List.of("after-take"), peekAll(store.queue("small7")), "room again");
    }
  }

  @Test
  void atItsOwnBoundATenantIsRefusedAndKeepsWhatItHas() throws Exception {
    try (QueueStore store = open(QueueLimits.DEFAULTS.withTenantMaxBytes(3L * TEN))) {
      FileTenantQueue q = store.queue("t");
      appendAll(q, records("r", 3));
      QueueFullException e =
          assertThrows(QueueFullException.class, () -> append(q, "r-4444444", 1, T0));
      assertEquals(QueueFullException.Bound.TENANT_BYTES, e.bound());
      assertEquals(
          "the queue of tenant t holds 90 bytes; a record of 29 more would pass the bound of 90"
              + " bytes",
          e.getMessage());
      assertEquals(records("r", 3), peekAll(q));
      append(store.queue("other"), "other-one!", 1, T0);
      assertEquals(List.of("other-one!"), peekAll(store.queue("other")));
    }
  }

  @Test
  void underDropOldestTheTotalBoundTakesOnlyFromTheAppendingTenant() throws Exception {
    QueueLimits limits =
        QueueLimits.DEFAULTS
            .withTotalMaxBytes(10L * TEN)
            .withFullPolicy(QueueFullPolicy.DROP_OLDEST);
    try (QueueStore store = open(limits)) {
      List<String> large = records("lg", 7);
      appendAll(store.queue("large"), large);
      FileTenantQueue small = store.queue("small");
      appendAll(small, records("sm", 3));
      append(small, "sm-extra-1", 1, T0);
      assertEquals(large, peekAll(store.queue("large")), "the largest queue is not the one to pay");
      List<String> want = new ArrayList<>(records("sm", 3).subList(1, 3));
      want.add("sm-extra-1");
      assertEquals(want, peekAll(small));
      assertArrayEquals(new long[] {1, 1, TEN}, listener.dropped("small", DropReason.TOTAL));

      FileTenantQueue fresh = store.queue("fresh");
      QueueFullException e =
          assertThrows(QueueFullException.class, () -> append(fresh, "fresh-one!", 1, T0));
      assertEquals(QueueFullException.Bound.TOTAL_BYTES, e.bound());
      assertEquals(10L * TEN, store.bytes(), "a tenant with nothing to give is refused");
      assertEquals(0, listener.dropped("large", DropReason.TOTAL)[0]);
    }
  }

  @Test
  void underDropOldestATenantThatCannotMakeEnoughRoomIsRefusedWithoutDropping() throws Exception {
    QueueLimits limits =
        QueueLimits.DEFAULTS
            .withTotalMaxBytes(4L * TEN)
            .withFullPolicy(QueueFullPolicy.DROP_OLDEST);
    try (QueueStore store = open(limits)) {
      appendAll(store.queue("a"), records("a", 3));
      FileTenantQueue b = store.queue("b");
      append(b, "b-00000001", 1, T0);
      QueueFullException e =
          assertThrows(
              QueueFullException.class, () -> append(b, "b-record-twice-as-long-x", 1, T0));
      assertEquals(QueueFullException.Bound.TOTAL_BYTES, e.bound());
      assertEquals(List.of("b-00000001"), peekAll(b), "its one record would not make room");
      assertEquals(0, listener.dropped("b", DropReason.TOTAL)[0]);
    }
  }
}
