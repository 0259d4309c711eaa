package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.RecordLayout.RECORD_HEADER_BYTES;
import static io.prwrelay.server.queue.RecordLayout.SEGMENT_HEADER_BYTES;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The on-disk queue of one tenant: appends records to its newest segment, reads them back from the
 * head, consumes and drops them, persists the head and removes the files of a drained queue. It
 * tells the story; the parts own the state: {@link TenantIndex} what is queued (segments, head,
 * counters), {@link TenantFiles} the directory and its files, {@link RecordCodec} the record
 * checks, {@link CutReporter} the reports of damaged data. This class itself owns only the ID of
 * the next segment: IDs only grow, deleted ones included, so a head file never points into a newer
 * segment of the same name.
 *
 * <p>Everything but the counter getters runs on the store's I/O thread; the counters may be read
 * from any thread ({@link TenantIndex}).
 *
 * <p>A segment whose records are all consumed is deleted as soon as it is not the last one; the
 * last one stays (and keeps taking appends) with its channel closed, so an idle tenant holds no
 * open file, until {@link #removeIfDrained()} (run by {@link QueueStore#expire} every few seconds)
 * finds the queue drained and removes its segment, head and tenant files and its directory; the
 * next append makes them again.
 */
final class TenantLog {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.queue");

  final String tenant;
  private final TenantFiles files;
  private final TenantIndex index;
  private final RecordCodec codec;
  private final CutReporter cuts;
  private long nextSegmentId = 1;

  /** Whether the tenant's directory was found on replay or made since ({@link #created()}). */
  private volatile boolean created;

  private TenantLog(String tenant, Path dir, StoreContext context, boolean dirReady) {
    this.tenant = tenant;
    this.files = new TenantFiles(tenant, context.root(), dir, context.io(), dirReady);
    this.index = new TenantIndex(files, context.totals());
    this.codec = context.codec();
    this.cuts = new CutReporter(tenant, context.listener());
  }

  /** A queue for a tenant that has none on disk yet; its directory is made on the first append. */
  static TenantLog create(String tenant, StoreContext context) {
    return new TenantLog(
        tenant, context.root().resolve(TenantDirNames.encode(tenant)), context, false);
  }

  /**
   * Loads a tenant directory written before ({@link QueueRecovery#replayTenant}).
   *
   * @throws IOException only when the directory cannot be read or written, or holds a segment of a
   *     newer format; never for corrupt data
   */
  static TenantLog replay(String tenant, Path dir, StoreContext context, SegmentScanner scanner)
      throws IOException {
    TenantLog log = new TenantLog(tenant, dir, context, true);
    log.created = true;
    log.nextSegmentId = QueueRecovery.replayTenant(log.files, log.index, scanner, log.cuts);
    return log;
  }

  // ---------------------------------------------------------------- counters (any thread)

  long bytes() {
    return index.bytes();
  }

  long records() {
    return index.records();
  }

  long series() {
    return index.series();
  }

  /** Bytes of the tenant's segment files (consumed parts and headers included). */
  long diskBytes() {
    return index.diskBytes();
  }

  /**
   * Whether the tenant's directory was there when the store opened or was made since (it stays true
   * after {@link #removeIfDrained()}). Any thread.
   */
  boolean created() {
    return created;
  }

  /** Append time of the oldest queued record; meaningless when {@link #records()} is 0. */
  long oldestMillis() {
    return index.oldestMillis();
  }

  // ---------------------------------------------------------------- appending

  /**
   * The segment the next record of {@code recordBytes} goes to: the last one while it is writable
   * and has room (an empty one takes a record of any size), else a new one.
   */
  Segment segmentFor(int recordBytes, long segmentBytes) throws IOException {
    files.ensureDir();
    created = true;
    Segment last = index.last();
    if (last != null
        && last.writable
        && (last.size <= SEGMENT_HEADER_BYTES || last.size + recordBytes <= segmentBytes)) {
      try {
        files.ensureOpen(last);
        return last;
      } catch (IOException e) {
        last.writable = false;
        LOG.log(
            Level.WARNING, "cannot reopen queue segment " + last.path + ", starting a new one", e);
      }
    }
    Segment s = files.createSegment(nextSegmentId++);
    index.addNew(s);
    return s;
  }

  // ---------------------------------------------------------------- a new tenant's files

  /**
   * Whether the tenant's directory must be made before its next append: a new tenant's, or one
   * removed after its queue drained ({@link TenantCreation} makes it off the I/O thread).
   */
  boolean needsFiles() {
    return !files.ready();
  }

  /**
   * True when nothing is queued and the tenant has no files (none yet, or removed once drained):
   * then nothing on disk or in flight refers to this log. Any thread, meaningful when no append of
   * the tenant is under way.
   */
  boolean vacant() {
    return index.records() == 0 && !files.ready();
  }

  /** Reserves the ID of the first segment of a directory {@link #makeFiles} will make. */
  long reserveSegmentId() {
    return nextSegmentId++;
  }

  /**
   * Makes the tenant's directory, its {@code tenant} file and segment {@code id}, each flushed. Any
   * thread: touches no state of this log, and the I/O thread leaves a log whose files are being
   * made alone until {@link #adopt}.
   *
   * @return the segment, open and empty
   */
  Segment makeFiles(long id) throws IOException {
    files.makeDir();
    return files.createSegment(id);
  }

  /** Takes the files {@link #makeFiles} made: the directory is ready, the segment the last. */
  void adopt(Segment segment) {
    files.markReady();
    created = true;
    index.addNew(segment);
  }

  /**
   * Writes a record at the end of {@code segment} (not flushed) and indexes it. On failure the
   * segment is cut back to where the record started and takes no more appends.
   *
   * @param sources record header and payload, consumed by the write
   */
  void append(Segment segment, ByteBuffer[] sources, int recordBytes, long millis, int seriesField)
      throws IOException {
    long at = segment.size;
    try {
      files.ensureOpen(segment);
      segment.channel.position(at);
      files.io.write(segment.channel, sources);
    } catch (IOException e) {
      segment.writable = false;
      try {
        if (segment.channel != null) {
          segment.channel.truncate(at);
        }
      } catch (IOException ignored) {
        // Replay cuts whatever part of the record reached the disk.
      }
      index.discardIfEmpty(segment);
      throw SegmentIo.failure("cannot write queue segment", segment.path, e);
    }
    index.appended(segment, at, recordBytes, millis, seriesField);
  }

  /**
   * Takes back the records written to {@code segment} from {@code size} on, after their flush
   * failed: they leave the index, the file is cut back (best effort) and takes no more appends.
   */
  void rollback(Segment segment, long size) {
    if (segment.deleted) {
      return;
    }
    index.forgetFrom(segment, segment.indexAtOrAfter(size));
    segment.size = size;
    segment.writable = false;
    try {
      files.ensureOpen(segment);
      segment.channel.truncate(size);
    } catch (IOException e) {
      LOG.log(Level.FINE, "cannot cut back queue segment " + segment.path, e);
    }
    index.discardIfEmpty(segment);
    index.normalize();
  }

  // ---------------------------------------------------------------- reading

  /**
   * Reads records from the head, in order, without consuming them: at most {@code maxRecords}, and
   * no more payload bytes than {@code maxBytes} unless the first record alone is larger. A record
   * that fails its CRC is cut off with the rest of its segment (reported and logged) and reading
   * goes on with the next segment.
   *
   * @return records whose payloads the caller owns
   */
  List<QueuedRecord> read(TenantQueue owner, int maxRecords, long maxBytes, ByteBufAllocator alloc)
      throws IOException {
    List<QueuedRecord> out = new ArrayList<>(Math.min(maxRecords, 64));
    long payloadBytes = 0;
    try {
      segmentsLoop:
      for (Segment s : index.segments()) {
        for (int i = s.head(); i < s.count(); i++) {
          int size = s.recordBytes(i) - RECORD_HEADER_BYTES;
          if (out.size() >= maxRecords || (!out.isEmpty() && payloadBytes + size > maxBytes)) {
            break segmentsLoop;
          }
          ByteBuf payload = readRecord(s, i, alloc);
          if (payload == null) {
            continue segmentsLoop; // cut: the rest of this segment is gone
          }
          out.add(
              new QueuedRecord(
                  owner,
                  s.id,
                  s.offset(i),
                  s.appendMillis(i),
                  s.series(i),
                  s.remoteWrite2(i),
                  payload));
          payloadBytes += size;
        }
      }
    } catch (IOException | RuntimeException e) {
      for (QueuedRecord r : out) {
        r.payload().release();
      }
      throw e;
    } finally {
      index.normalize();
    }
    return out;
  }

  /** The payload of record {@code i} (reader index past the header), or {@code null} if cut. */
  private ByteBuf readRecord(Segment s, int i, ByteBufAllocator alloc) throws IOException {
    int size = s.recordBytes(i);
    files.ensureOpen(s);
    ByteBuf buf = alloc.directBuffer(size, size);
    boolean ok = false;
    try {
      String problem = codec.readChecked(s.channel, s.offset(i), buf);
      if (problem != null) {
        cutAt(s, i, problem);
        return null;
      }
      buf.readerIndex(RECORD_HEADER_BYTES);
      ok = true;
      return buf;
    } finally {
      if (!ok) {
        buf.release();
      }
    }
  }

  /** Cuts segment {@code s} at record {@code i}: found damaged while reading. */
  private void cutAt(Segment s, int i, String problem) {
    long at = s.offset(i);
    long cut = s.size - at;
    index.forgetFrom(s, i);
    s.size = at;
    try {
      s.channel.truncate(at);
      files.io.force(s.channel, true);
    } catch (IOException e) {
      s.writable = false;
      LOG.log(Level.WARNING, "cannot cut damaged queue segment " + s.path, e);
    }
    cuts.report(s.path, at, cut, problem);
  }

  // ---------------------------------------------------------------- consuming and dropping

  /**
   * Consumes every record up to and including the one at {@code offset} of segment {@code
   * segmentId}; records already consumed or dropped are skipped.
   */
  void ackThrough(long segmentId, long offset) {
    index.ackThrough(segmentId, offset);
  }

  /**
   * True when a record lies before the one at {@code offset} of segment {@code segmentId}: the head
   * is not consumed up to it yet.
   */
  boolean headBefore(long segmentId, long offset) {
    return index.headBefore(segmentId, offset);
  }

  /** Drops head records appended before {@code cutoffMillis}. */
  void dropOlderThan(long cutoffMillis, DropTally tally) {
    index.dropOlderThan(cutoffMillis, tally);
  }

  /** Drops head records until at most {@code targetBytes} are queued. */
  void dropDownTo(long targetBytes, DropTally tally) {
    index.dropDownTo(targetBytes, tally);
  }

  /**
   * Removes the tenant's files when its queue is drained (every record consumed or dropped): the
   * last segment, the head and tenant files, and the directory. The next append makes them again.
   *
   * <p>Crash safety, in this order: (1) the head file is rewritten past the last segment and
   * flushed, so a crash from here on replays nothing even if a deletion below does not survive it;
   * (2) the segments are deleted and (3) the directory flushed, so the segments are gone for good
   * before (4) the head and tenant files and the directory go; (5) the queue directory is flushed.
   * Only consumed segments are ever deleted; a crash at any step leaves a directory that replays to
   * an empty queue, or no directory.
   *
   * @return true when the files were removed
   */
  boolean removeIfDrained() {
    if (!files.ready() || index.records() > 0) {
      return false;
    }
    try {
      files.writeHead(new HeadFile(nextSegmentId, 0), true);
      index.deleteAll();
      files.removeDirectory();
    } catch (IOException e) {
      // A file nobody knows of in the directory, or a disk refusing: the queue stays usable (the
      // next append makes what is missing), and the next check tries again.
      LOG.log(Level.WARNING, "cannot remove the drained queue directory " + files.dir, e);
      files.recheck();
      index.markHeadMoved();
      index.refreshDiskBytes();
      return false;
    }
    index.headWritten();
    index.refreshDiskBytes();
    return true;
  }

  // ---------------------------------------------------------------- head file and closing

  /**
   * Persists the head if it moved.
   *
   * @param flush write it even if it did not move, and flush it to the device (on close)
   */
  void persistHead(boolean flush) {
    if (!files.ready() || (!index.headMoved() && !flush)) {
      return;
    }
    try {
      files.writeHead(index.head(nextSegmentId), flush);
      index.headWritten();
    } catch (IOException e) {
      // Not fatal: replay starts from an older position and delivers some records again.
      LOG.log(Level.WARNING, "cannot write queue head file in " + files.dir, e);
    }
  }

  /** Persists and flushes the head, and closes every channel. */
  void close() {
    persistHead(true);
    index.closeChannels();
  }
}
