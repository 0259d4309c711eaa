package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.RecordLayout.SEGMENT_HEADER_BYTES;

import io.prwrelay.core.route.TenantIds;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Logger;

/**
 * Recovery when a store opens: finds the tenant directories of the queue directory and replays
 * each, validating every record from its head.
 *
 * <p>What survives, per tenant: the first bad record of a segment (bad length, past the end of the
 * file, bad CRC) cuts that segment there, on disk too, and is reported ({@link CutReporter}); the
 * later segments of the tenant are validated on their own and kept up to their own first bad
 * record, because each was written and flushed on its own. A segment whose header is torn or bad is
 * deleted whole; one whose header has the magic number but a version no relay writes ({@link
 * RecordLayout#checkVersion}) has a damaged byte there: its header is repaired and its records
 * validated as any others (a record's CRC covers all of it but its length); segments before the
 * head, and temporary files, are deleted. Only an unreadable directory, or a segment of a plausible
 * newer format version, fails the replay.
 */
final class QueueRecovery {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.queue");

  private QueueRecovery() {}

  /**
   * Replays every tenant directory of the queue directory, in name order. A directory that names no
   * valid tenant, or a second one of the same tenant, is ignored (logged).
   *
   * @return the replayed logs by tenant
   * @throws IOException when a directory cannot be read or written, or holds a segment of a newer
   *     format; never for corrupt data
   */
  static Map<String, TenantLog> replay(StoreContext context) throws IOException {
    List<Path> dirs = new ArrayList<>();
    try (DirectoryStream<Path> entries =
        Files.newDirectoryStream(context.root(), Files::isDirectory)) {
      entries.forEach(dirs::add);
    }
    Collections.sort(dirs);
    SegmentScanner scanner = new SegmentScanner();
    Map<String, TenantLog> logs = new LinkedHashMap<>();
    for (Path tenantDir : dirs) {
      String tenant = tenantOf(tenantDir);
      if (tenant == null) {
        LOG.warning("ignoring " + tenantDir + ": not a tenant queue directory");
        continue;
      }
      if (logs.containsKey(tenant)) {
        LOG.severe(
            "ignoring " + tenantDir + ": another directory already holds the queue of " + tenant);
        continue;
      }
      TenantLog log = TenantLog.replay(tenant, tenantDir, context, scanner);
      logs.put(tenant, log);
      if (log.records() > 0) {
        LOG.info(
            "queue of tenant "
                + tenant
                + ": "
                + log.records()
                + " records ("
                + log.bytes()
                + " bytes) to deliver");
      }
    }
    return logs;
  }

  /** The tenant a directory holds: its {@code tenant} file, else its decoded name. */
  private static String tenantOf(Path tenantDir) throws IOException {
    try {
      String tenant =
          new String(
              Files.readAllBytes(tenantDir.resolve(RecordLayout.TENANT_FILE)),
              StandardCharsets.UTF_8);
      if (TenantIds.problem(tenant) == null) {
        return tenant;
      }
    } catch (NoSuchFileException e) {
      // Created but not finished before a crash: the name says which tenant it is.
    }
    String decoded = TenantDirNames.decode(tenantDir.getFileName().toString());
    return decoded != null && TenantIds.problem(decoded) == null ? decoded : null;
  }

  /**
   * Loads one tenant directory into {@code index} (empty): finds the head, validates every record
   * from it, cuts a corrupt or torn tail of any segment at its last good record, and deletes
   * consumed segments and temporary files.
   *
   * @return the ID the tenant's next new segment takes: past every ID used, deleted ones included
   */
  static long replayTenant(
      TenantFiles files, TenantIndex index, SegmentScanner scanner, CutReporter cuts)
      throws IOException {
    HeadFile head = files.readHead();
    List<Long> ids = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(files.dir)) {
      for (Path f : entries) {
        String name = f.getFileName().toString();
        long id = RecordLayout.segmentId(name);
        if (id >= 0) {
          ids.add(id);
        } else if (name.endsWith(RecordLayout.TEMP_SUFFIX)) {
          Files.deleteIfExists(f);
        }
      }
    }
    Collections.sort(ids);
    long headSegment = head == null ? 0 : head.segmentId();
    for (long id : ids) {
      Path path = files.dir.resolve(RecordLayout.segmentFileName(id));
      if (id < headSegment) {
        Files.deleteIfExists(path); // consumed before the last run ended
        continue;
      }
      long from = id == headSegment ? Math.max(head.offset(), SEGMENT_HEADER_BYTES) : 0;
      Segment s = loadSegment(files, scanner, cuts, id, path, from);
      if (s != null) {
        index.addLoaded(s);
      }
    }
    long lastId = ids.isEmpty() ? 0 : ids.get(ids.size() - 1);
    if (head == null) {
      index.markHeadMoved();
    }
    index.normalize();
    return Math.max(lastId, headSegment) + 1; // ids only grow, deleted ones included
  }

  /** Validates one segment; {@code null} when nothing of it is left. */
  private static Segment loadSegment(
      TenantFiles files, SegmentScanner scanner, CutReporter cuts, long id, Path path, long from)
      throws IOException {
    Segment s = new Segment(id, path, 0);
    try (FileChannel ch = files.openExisting(path)) {
      long fileSize = ch.size();
      ByteBuffer header = ByteBuffer.allocate(SEGMENT_HEADER_BYTES);
      int n = 0;
      while (header.hasRemaining() && n >= 0) {
        n = ch.read(header, header.position());
      }
      if (header.hasRemaining() || header.getInt(0) != RecordLayout.SEGMENT_MAGIC) {
        ch.close();
        Files.deleteIfExists(path);
        cuts.report(
            path,
            0,
            fileSize,
            header.hasRemaining() ? "torn segment header" : "bad segment header");
        return null;
      }
      int version = header.getInt(4);
      switch (RecordLayout.checkVersion(version)) {
        case NEWER:
          throw new IOException(
              "queue segment "
                  + path
                  + " has format version "
                  + version
                  + ", written by a newer relay; this relay reads versions "
                  + RecordLayout.OLDEST_SEGMENT_VERSION
                  + " to "
                  + RecordLayout.SEGMENT_VERSION
                  + ": run the newer relay on this directory until its queues are drained");
        case DAMAGED:
          // The records say for themselves whether they are intact (each has its CRC), and read
          // as the current version they mean what they meant: a version 1 record never has the
          // series field's top bit set. So the header is repaired and the records kept.
          repairVersion(files, ch, path, version, cuts.tenant());
          version = RecordLayout.SEGMENT_VERSION;
          break;
        case KNOWN:
          break;
      }
      if (version < RecordLayout.SEGMENT_VERSION) {
        // An older format holds only what it can say: new records go to a new segment.
        s.writable = false;
      }
      long start = Math.max(SEGMENT_HEADER_BYTES, Math.min(from, fileSize));
      String problem = scanner.scan(ch, s, start, fileSize);
      if (problem != null) {
        ch.truncate(s.size);
        files.io.force(ch, true);
        cuts.report(path, s.size, fileSize - s.size, problem);
      }
    }
    return s;
  }

  /** Writes this code's version into a segment header whose version field was damaged. */
  private static void repairVersion(
      TenantFiles files, FileChannel ch, Path path, int damaged, String tenant) throws IOException {
    ByteBuffer version = ByteBuffer.allocate(4).putInt(0, RecordLayout.SEGMENT_VERSION);
    while (version.hasRemaining()) {
      ch.write(version, 4 + version.position());
    }
    files.io.force(ch, true);
    LOG.warning(
        "queue of tenant "
            + tenant
            + ": segment "
            + path
            + " had a damaged header (format version "
            + damaged
            + ", which no relay writes); header repaired to version "
            + RecordLayout.SEGMENT_VERSION
            + ", its records kept as far as their CRCs hold");
  }
}
