package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.QueueTesting.T0;
import static io.prwrelay.server.queue.QueueTesting.append;
import static io.prwrelay.server.queue.QueueTesting.appendAsync;
import static io.prwrelay.server.queue.QueueTesting.copyTree;
import static io.prwrelay.server.queue.QueueTesting.peekAll;
import static io.prwrelay.server.queue.QueueTesting.segmentFiles;
import static io.prwrelay.server.queue.QueueTesting.take;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.queue.QueueTesting.RecordingListener;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What survives a crash, a torn write or damaged bytes, and what is cut and counted. */
class QueueRecoveryTest {
  private static final int RECORD = RecordLayout.recordBytes(10);

  @TempDir Path tmp;

  private static String ten(int i) {
    return String.format("record%04d", i);
  }

  private static List<String> tens(int from, int to) {
    List<String> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(ten(i));
    }
    return out;
  }

  /** Writes {@code count} 10-byte records for tenant "t" into {@code dir} and closes. */
  private static void fill(Path dir, QueueLimits limits, int count) throws Exception {
    try (QueueStore store = QueueStore.open(dir, limits, QueueListener.NONE)) {
      for (int i = 0; i < count; i++) {
        append(store.queue("t"), ten(i), 1, T0);
      }
    }
  }

  /** Queue limits with room for {@code records} 10-byte records in a segment. */
  private static QueueLimits segmentsOf(int records) {
    return QueueLimits.DEFAULTS.withSegmentBytes(
        RecordLayout.SEGMENT_HEADER_BYTES + records * RECORD);
  }

  /**
   * Writes {@code count} 10-byte records for tenant "t" into {@code dir} with {@code limits} from
   * {@link #segmentsOf}, closes, and returns the segment files, checking that there are {@code
   * segments}.
   */
  private static List<Path> fillSegments(Path dir, QueueLimits limits, int count, int segments)
      throws Exception {
    fill(dir, limits, count);
    List<Path> files = segmentFiles(dir.resolve("t"));
    assertEquals(segments, files.size());
    return files;
  }

  private static void truncate(Path file, long size) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.truncate(size);
    }
  }

  private static void flipByte(Path file, long offset) throws IOException {
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, offset);
      b.put(0, (byte) (b.get(0) ^ 0x40));
      b.rewind();
      ch.write(b, offset);
    }
  }

  @Test
  void tornLastRecordIsCutAtEveryByteOffsetAndEverythingBeforeItSurvives() throws Exception {
    Path golden = tmp.resolve("golden");
    fill(golden, QueueLimits.DEFAULTS, 5);
    Path segment = segmentFiles(golden.resolve("t")).get(0);
    long end = Files.size(segment);
    long lastStart = end - RECORD;
    assertEquals(RecordLayout.SEGMENT_HEADER_BYTES + 5L * RECORD, end);

    for (long cut = lastStart; cut < end; cut++) {
      Path dir = tmp.resolve("cut-" + cut);
      copyTree(golden, dir);
      Path seg = dir.resolve("t").resolve(segment.getFileName());
      truncate(seg, cut);
      RecordingListener listener = new RecordingListener();
      try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, listener)) {
        FileTenantQueue q = store.queue("t");
        assertEquals(tens(0, 4), peekAll(q), "at " + cut);
        assertEquals(lastStart, Files.size(seg), "the torn bytes are gone from the file");
        assertEquals(cut - lastStart, listener.cutBytes, "at " + cut);
        assertEquals(cut == lastStart ? 0 : 1, listener.cuts.size(), "at " + cut);
        append(q, "after-cut!", 1, T0);
      }
      try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, listener)) {
        List<String> want = tens(0, 4);
        want.add("after-cut!");
        assertEquals(want, peekAll(store.queue("t")), "appends after the cut replay too");
      }
    }
  }

  @Test
  void flippedByteCutsItsSegmentThereAndKeepsLaterSegments() throws Exception {
    Path dir = tmp.resolve("q");
    QueueLimits limits = segmentsOf(5);
    List<Path> segments = fillSegments(dir, limits, 10, 2);
    // Record 2 of the first segment: flip a byte of its payload.
    long record2 = RecordLayout.SEGMENT_HEADER_BYTES + 2L * RECORD;
    flipByte(segments.get(0), record2 + RecordLayout.RECORD_HEADER_BYTES + 3);

    RecordingListener listener = new RecordingListener();
    try (QueueStore store = QueueStore.open(dir, limits, listener)) {
      List<String> want = tens(0, 2);
      want.addAll(tens(5, 10));
      assertEquals(want, peekAll(store.queue("t")));
      assertEquals(List.of("t " + segments.get(0).getFileName() + " " + 3 * RECORD), listener.cuts);
      assertEquals(7, store.queue("t").records());
    }
  }

  @Test
  void damagedLengthFieldIsCutLikeATornRecord() throws Exception {
    Path dir = tmp.resolve("q");
    fill(dir, QueueLimits.DEFAULTS, 3);
    Path seg = segmentFiles(dir.resolve("t")).get(0);
    flipByte(seg, RecordLayout.SEGMENT_HEADER_BYTES + RECORD + RecordLayout.LENGTH_OFFSET);
    RecordingListener listener = new RecordingListener();
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, listener)) {
      assertEquals(tens(0, 1), peekAll(store.queue("t")));
      assertEquals(2L * RECORD, listener.cutBytes);
    }
  }

  @Test
  void segmentWithABadOrTornHeaderIsDeletedAndCounted() throws Exception {
    Path dir = tmp.resolve("q");
    QueueLimits limits = segmentsOf(2);
    List<Path> segments = fillSegments(dir, limits, 6, 3);
    flipByte(segments.get(1), 0);
    Path torn = dir.resolve("t").resolve(RecordLayout.segmentFileName(4));
    Files.write(torn, new byte[] {0x50, 0x52, 0x57});

    RecordingListener listener = new RecordingListener();
    try (QueueStore store = QueueStore.open(dir, limits, listener)) {
      FileTenantQueue q = store.queue("t");
      List<String> want = new ArrayList<>(tens(0, 2));
      want.addAll(tens(4, 6));
      assertEquals(want, peekAll(q));
      assertEquals(2, listener.cuts.size());
      assertEquals(8 + 2L * RECORD + 3, listener.cutBytes);
      assertTrue(Files.notExists(segments.get(1)));
      assertTrue(Files.notExists(torn));
      append(q, "appended!!", 1, T0);
      want.add("appended!!");
      assertEquals(want, peekAll(q));
      assertTrue(
          Files.exists(dir.resolve("t").resolve(RecordLayout.segmentFileName(5))),
          "segment ids only grow: the deleted segment 4's id is not taken again");
    }
  }

  private static void writeVersion(Path segment, int version) throws IOException {
    try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(4).putInt(0, version), 4);
    }
  }

  @Test
  void segmentOfAPlausibleNewerFormatStopsOpenNamingItAndWhatToDo() throws Exception {
    for (int version : new int[] {3, RecordLayout.NEWEST_PLAUSIBLE_SEGMENT_VERSION}) {
      Path dir = tmp.resolve("q" + version);
      fill(dir, QueueLimits.DEFAULTS, 1);
      Path seg = segmentFiles(dir.resolve("t")).get(0);
      writeVersion(seg, version);
      IOException e =
          assertThrows(
              IOException.class,
              () -> QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE));
      assertEquals(
          "queue segment "
              + seg
              + " has format version "
              + version
              + ", written by a newer relay; this relay reads versions 1 to 2: run the newer relay"
              + " on this directory until its queues are drained",
          e.getMessage());
    }
  }

  @Test
  void implausibleVersionIsADamagedHeaderRepairedWithEveryIntactRecordKept() throws Exception {
    // 0 (the byte zeroed), a flipped top bit of the last byte (0x82), a damaged upper byte, -1.
    for (int version : new int[] {0, 0x82, 0x01000002, -1}) {
      Path dir = tmp.resolve("v" + Integer.toHexString(version));
      QueueLimits limits = segmentsOf(2);
      List<Path> segments = fillSegments(dir, limits, 6, 3);
      writeVersion(segments.get(1), version);
      RecordingListener listener = new RecordingListener();
      try (QueueStore store = QueueStore.open(dir, limits, listener)) {
        FileTenantQueue q = store.queue("t");
        assertEquals(tens(0, 6), peekAll(q), "version " + version);
        assertEquals(List.of(), listener.cuts);
        append(q, "appended!!", 1, T0);
        assertEquals(7, peekAll(q).size());
      }
      try (FileChannel ch = FileChannel.open(segments.get(1), StandardOpenOption.READ)) {
        ByteBuffer header = ByteBuffer.allocate(8);
        ch.read(header, 0);
        assertEquals(RecordLayout.SEGMENT_VERSION, header.getInt(4), "header repaired on disk");
      }
    }
  }

  @Test
  void implausibleVersionWithADamagedRecordKeepsTheRecordsBeforeIt() throws Exception {
    Path dir = tmp.resolve("q");
    QueueLimits limits = segmentsOf(3);
    List<Path> segments = fillSegments(dir, limits, 6, 2);
    writeVersion(segments.get(0), 0);
    flipByte(segments.get(0), RecordLayout.SEGMENT_HEADER_BYTES + RECORD + 25);
    RecordingListener listener = new RecordingListener();
    try (QueueStore store = QueueStore.open(dir, limits, listener)) {
      List<String> want = new ArrayList<>(tens(0, 1));
      want.addAll(tens(3, 6));
      assertEquals(want, peekAll(store.queue("t")));
      assertEquals(2L * RECORD, listener.cutBytes);
    }
  }

  @Test
  void lostOrDamagedHeadFileDeliversAgainInsteadOfLosing() throws Exception {
    Path dir = tmp.resolve("q");
    fill(dir, QueueLimits.DEFAULTS, 4);
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      assertEquals(tens(0, 2), take(store.queue("t"), 2));
    }
    Path head = dir.resolve("t").resolve("head");
    flipByte(head, 10);
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      assertEquals(tens(0, 4), peekAll(store.queue("t")), "at-least-once: acknowledged ones again");
      assertEquals(tens(0, 3), take(store.queue("t"), 3));
    }
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      assertEquals(tens(3, 4), peekAll(store.queue("t")), "a rewritten head holds again");
    }
    Files.delete(head);
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      assertEquals(tens(0, 4), peekAll(store.queue("t")));
    }
  }

  @Test
  void damageFoundWhileReadingIsCutAndReadingGoesOn() throws Exception {
    Path dir = tmp.resolve("q");
    QueueLimits limits = QueueLimits.DEFAULTS.withSegmentBytes(8 + 3 * RECORD);
    RecordingListener listener = new RecordingListener();
    try (QueueStore store = QueueStore.open(dir, limits, listener)) {
      FileTenantQueue q = store.queue("t");
      for (int i = 0; i < 6; i++) {
        append(q, ten(i), 2, T0);
      }
      Path first = segmentFiles(dir.resolve("t")).get(0);
      flipByte(first, 8 + RECORD + RecordLayout.RECORD_HEADER_BYTES);
      List<String> want = tens(0, 1);
      want.addAll(tens(3, 6));
      assertEquals(want, peekAll(q));
      assertEquals(2L * RECORD, listener.cutBytes);
      assertEquals(4, q.records());
      assertEquals(8, q.series());
    }
    try (QueueStore store = QueueStore.open(dir, limits, listener)) {
      assertEquals(4, store.queue("t").records(), "the cut is on disk too");
      assertEquals(1, listener.cuts.size());
    }
  }

  @Test
  void replayFindsTheTenantInItsFileNotItsDirectoryName() throws Exception {
    Path dir = tmp.resolve("q");
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      append(store.queue("Team.A"), ten(0), 1, T0);
    }
    Path tenantDir = dir.resolve(TenantDirNames.encode("Team.A"));
    assertEquals("Team.A", Files.readString(tenantDir.resolve("tenant")));
    Files.move(tenantDir, dir.resolve("renamed by hand"));
    try (QueueStore store = QueueStore.open(dir, QueueLimits.DEFAULTS, QueueListener.NONE)) {
      assertEquals(1, store.queues().size());
      assertEquals(List.of(ten(0)), peekAll(store.queue("Team.A")));
    }
  }

  @Test
  void copyTakenWhileAppendingHoldsEveryAcknowledgedRecord() throws Exception {
    Path dir = tmp.resolve("live");
    QueueLimits limits = QueueLimits.DEFAULTS.withSegmentBytes(4096);
    Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    AtomicBoolean stop = new AtomicBoolean();
    try (QueueStore store = QueueStore.open(dir, limits, QueueListener.NONE)) {
      FileTenantQueue q = store.queue("t");
      Thread writer =
          new Thread(
              () -> {
                List<CompletableFuture<Void>> inFlight = new ArrayList<>();
                for (int i = 0; !stop.get() && i < 100_000; i++) {
                  String text = ten(i % 10_000) + "-" + i;
                  inFlight.add(appendAsync(q, text, T0).thenRun(() -> acknowledged.add(text)));
                  if (inFlight.size() == 32) {
                    inFlight.remove(0).join();
                  }
                }
                inFlight.forEach(CompletableFuture::join);
              });
      writer.start();
      for (int copy = 0; copy < 5; copy++) {
        while (acknowledged.size() < (copy + 1) * 300) {
          Thread.sleep(1);
        }
        Set<String> before = Set.copyOf(acknowledged);
        Path snapshot = tmp.resolve("copy-" + copy);
        copyTree(dir, snapshot);
        Files.deleteIfExists(snapshot.resolve("lock"));
        try (QueueStore copyStore = QueueStore.open(snapshot, limits, QueueListener.NONE)) {
          List<String> found = peekAll(copyStore.queue("t"));
          assertTrue(found.containsAll(before), "copy " + copy + " lost acknowledged records");
          for (int i = 1; i < found.size(); i++) {
            long prev = Long.parseLong(found.get(i - 1).substring(11));
            long next = Long.parseLong(found.get(i).substring(11));
            assertEquals(prev + 1, next, "in order, without gaps");
          }
        }
      }
      stop.set(true);
      writer.join();
    }
  }
}
