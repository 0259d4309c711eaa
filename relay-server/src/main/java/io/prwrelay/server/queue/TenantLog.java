package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.RecordLayout.MILLIS_OFFSET;
import static io.prwrelay.server.queue.RecordLayout.RECORD_HEADER_BYTES;
import static io.prwrelay.server.queue.RecordLayout.SEGMENT_HEADER_BYTES;
import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.TRUNCATE_EXISTING;
import static java.nio.file.StandardOpenOption.WRITE;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.zip.CRC32C;

/**
 * The on-disk queue of one tenant: its directory, its segments oldest first (the last one takes
 * appends), the head (first record not consumed yet) and the counters of what is queued.
 *
 * <p>Everything but the counter getters runs on the store's I/O thread. The counters are volatile
 * fields with that thread as their only writer, so any thread may read them; a reader can see one
 * counter already updated and another not yet.
 *
 * <p>A segment whose records are all consumed is deleted as soon as it is not the last one; the
 * last one stays (and keeps taking appends) with its channel closed, so an idle tenant holds no
 * open file, until {@link #removeIfDrained()} (run by {@link QueueStore#expire} every few seconds)
 * finds the queue drained and removes its segment, head and tenant files and its directory; the
 * next append makes them again.
 */
final class TenantLog {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.queue");
  private static final Set<StandardOpenOption> READ_WRITE = EnumSet.of(READ, WRITE);
  private static final Set<StandardOpenOption> NEW_FILE = EnumSet.of(CREATE_NEW, READ, WRITE);

  final String tenant;
  final Path dir;
  private final Path root;
  private final SegmentIo io;
  private final QueueTotals totals;
  private final QueueListener listener;
  private final ArrayDeque<Segment> segments = new ArrayDeque<>();
  private final CRC32C crc = new CRC32C();
  private long nextSegmentId = 1;
  private boolean dirReady;
  private boolean headDirty;

  private volatile long bytes;
  private volatile long records;
  private volatile long series;
  private volatile long oldestMillis;
  private volatile long diskBytes;

  private TenantLog(
      String tenant,
      Path root,
      Path dir,
      SegmentIo io,
      QueueTotals totals,
      QueueListener listener) {
    this.tenant = tenant;
    this.root = root;
    this.dir = dir;
    this.io = io;
    this.totals = totals;
    this.listener = listener;
  }

  /** A queue for a tenant that has none on disk yet; its directory is made on the first append. */
  static TenantLog create(
      String tenant, Path root, SegmentIo io, QueueTotals totals, QueueListener listener) {
    return new TenantLog(
        tenant, root, root.resolve(TenantDirNames.encode(tenant)), io, totals, listener);
  }

  /**
   * Loads a tenant directory written before: finds the head, validates every record from it, cuts a
   * corrupt or torn tail of any segment at its last good record (reported and logged), and deletes
   * consumed segments.
   *
   * @throws IOException only when the directory cannot be read or written, or holds a segment of a
   *     newer format; never for corrupt data
   */
  static TenantLog replay(
      String tenant,
      Path root,
      Path dir,
      SegmentIo io,
      QueueTotals totals,
      QueueListener listener,
      SegmentScanner scanner)
      throws IOException {
    TenantLog log = new TenantLog(tenant, root, dir, io, totals, listener);
    log.dirReady = true;
    log.load(scanner);
    return log;
  }

  private void load(SegmentScanner scanner) throws IOException {
    HeadFile head = HeadFile.read(io, dir);
    List<Long> ids = new ArrayList<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
      for (Path f : files) {
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
      Path path = dir.resolve(RecordLayout.segmentFileName(id));
      if (id < headSegment) {
        Files.deleteIfExists(path); // consumed before the last run ended
        continue;
      }
      long from = id == headSegment ? Math.max(head.offset(), SEGMENT_HEADER_BYTES) : 0;
      Segment s = loadSegment(scanner, id, path, from);
      if (s != null) {
        segments.addLast(s);
        for (int i = 0; i < s.count(); i++) {
          addCounts(s.recordBytes(i), 1, s.series(i));
        }
      }
    }
    long lastId = ids.isEmpty() ? 0 : ids.get(ids.size() - 1);
    nextSegmentId = Math.max(lastId, headSegment) + 1; // ids only grow, deleted ones included
    headDirty = head == null;
    normalizeHead();
  }

  /** Validates one segment; {@code null} when nothing of it is left. */
  private Segment loadSegment(SegmentScanner scanner, long id, Path path, long from)
      throws IOException {
    Segment s = new Segment(id, path, 0);
    try (FileChannel ch = io.open(path, READ_WRITE)) {
      long fileSize = ch.size();
      ByteBuffer header = ByteBuffer.allocate(SEGMENT_HEADER_BYTES);
      int n = 0;
      while (header.hasRemaining() && n >= 0) {
        n = ch.read(header, header.position());
      }
      if (header.hasRemaining() || header.getInt(0) != RecordLayout.SEGMENT_MAGIC) {
        ch.close();
        Files.deleteIfExists(path);
        cutReported(
            path,
            0,
            fileSize,
            header.hasRemaining() ? "torn segment header" : "bad segment header");
        return null;
      }
      int version = header.getInt(4);
      if (version < RecordLayout.OLDEST_SEGMENT_VERSION || version > RecordLayout.SEGMENT_VERSION) {
        throw new IOException(
            "queue segment "
                + path
                + " has format version "
                + version
                + "; this relay reads version "
                + RecordLayout.SEGMENT_VERSION);
      }
      if (version < RecordLayout.SEGMENT_VERSION) {
        // An older format holds only what it can say: new records go to a new segment.
        s.writable = false;
      }
      long start = Math.max(SEGMENT_HEADER_BYTES, Math.min(from, fileSize));
      String problem = scanner.scan(ch, s, start, fileSize);
      if (problem != null) {
        ch.truncate(s.size);
        io.force(ch, true);
        cutReported(path, s.size, fileSize - s.size, problem);
      }
    }
    return s;
  }

  // ---------------------------------------------------------------- counters (any thread)

  long bytes() {
    return bytes;
  }

  long records() {
    return records;
  }

  long series() {
    return series;
  }

  /** Bytes of the tenant's segment files (consumed parts and headers included). */
  long diskBytes() {
    return diskBytes;
  }

  /** Append time of the oldest queued record; meaningless when {@link #records()} is 0. */
  long oldestMillis() {
    return oldestMillis;
  }

  // ---------------------------------------------------------------- appending

  /**
   * The segment the next record of {@code recordBytes} goes to: the last one while it is writable
   * and has room (an empty one takes a record of any size), else a new one.
   */
  Segment segmentFor(int recordBytes, long segmentBytes) throws IOException {
    ensureDir();
    Segment last = segments.peekLast();
    if (last != null
        && last.writable
        && (last.size <= SEGMENT_HEADER_BYTES || last.size + recordBytes <= segmentBytes)) {
      try {
        ensureOpen(last);
        return last;
      } catch (IOException e) {
        last.writable = false;
        LOG.log(
            Level.WARNING, "cannot reopen queue segment " + last.path + ", starting a new one", e);
      }
    }
    return roll();
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
      ensureOpen(segment);
      segment.channel.position(at);
      io.write(segment.channel, sources);
    } catch (IOException e) {
      segment.writable = false;
      try {
        if (segment.channel != null) {
          segment.channel.truncate(at);
        }
      } catch (IOException ignored) {
        // Replay cuts whatever part of the record reached the disk.
      }
      discardIfEmpty(segment);
      throw failure("cannot write queue segment", segment.path, e);
    }
    segment.add(at, recordBytes, millis, seriesField);
    segment.size = at + recordBytes;
    addCounts(recordBytes, 1, RecordLayout.seriesOf(seriesField));
    normalizeHead();
  }

  /**
   * Takes back the records written to {@code segment} from {@code size} on, after their flush
   * failed: they leave the index, the file is cut back (best effort) and takes no more appends.
   */
  void rollback(Segment segment, long size) {
    if (segment.deleted) {
      return;
    }
    forgetFrom(segment, segment.indexAtOrAfter(size));
    segment.size = size;
    segment.writable = false;
    try {
      ensureOpen(segment);
      segment.channel.truncate(size);
    } catch (IOException e) {
      LOG.log(Level.FINE, "cannot cut back queue segment " + segment.path, e);
    }
    discardIfEmpty(segment);
    normalizeHead();
  }

  private Segment roll() throws IOException {
    long id = nextSegmentId++;
    Path path = dir.resolve(RecordLayout.segmentFileName(id));
    Segment s = new Segment(id, path, 0);
    try {
      s.channel = io.open(path, NEW_FILE);
      ByteBuffer header = ByteBuffer.allocate(SEGMENT_HEADER_BYTES);
      RecordLayout.putSegmentHeader(header);
      header.flip();
      io.write(s.channel, new ByteBuffer[] {header});
      syncDirectory(dir);
    } catch (IOException e) {
      s.closeChannel();
      try {
        Files.deleteIfExists(path);
      } catch (IOException ignored) {
        // An empty or headerless segment is cut on replay.
      }
      throw failure("cannot create queue segment", path, e);
    }
    s.size = SEGMENT_HEADER_BYTES;
    segments.addLast(s);
    normalizeHead();
    return s;
  }

  private void ensureDir() throws IOException {
    if (dirReady) {
      return;
    }
    try {
      Files.createDirectories(dir);
      Path tmp = dir.resolve(RecordLayout.TENANT_FILE + RecordLayout.TEMP_SUFFIX);
      try (FileChannel ch = io.open(tmp, EnumSet.of(CREATE, TRUNCATE_EXISTING, WRITE))) {
        io.write(ch, new ByteBuffer[] {ByteBuffer.wrap(tenant.getBytes(StandardCharsets.UTF_8))});
        io.force(ch, true);
      }
      Files.move(tmp, dir.resolve(RecordLayout.TENANT_FILE), StandardCopyOption.ATOMIC_MOVE);
      syncDirectory(dir);
      syncDirectory(root);
    } catch (IOException e) {
      throw failure("cannot create queue directory", dir, e);
    }
    dirReady = true;
  }

  /** Flushes a directory so a file created in it survives a crash (where the platform can). */
  private void syncDirectory(Path directory) throws IOException {
    FileChannel ch;
    try {
      ch = io.open(directory, EnumSet.of(READ));
    } catch (IOException e) {
      return; // Some platforms cannot open a directory; they need no directory flush.
    }
    try (ch) {
      io.force(ch, true);
    }
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
      for (Segment s : segments) {
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
      normalizeHead();
    }
    return out;
  }

  /** The payload of record {@code i} (reader index past the header), or {@code null} if cut. */
  private ByteBuf readRecord(Segment s, int i, ByteBufAllocator alloc) throws IOException {
    int size = s.recordBytes(i);
    long offset = s.offset(i);
    ensureOpen(s);
    ByteBuf buf = alloc.directBuffer(size, size);
    boolean ok = false;
    try {
      String problem = null;
      while (buf.writableBytes() > 0) {
        if (buf.writeBytes(s.channel, offset + buf.writerIndex(), buf.writableBytes()) < 0) {
          problem = "segment ends inside a record";
          break;
        }
      }
      if (problem == null) {
        crc.reset();
        crc.update(buf.nioBuffer(MILLIS_OFFSET, size - MILLIS_OFFSET));
        if (buf.getInt(RecordLayout.LENGTH_OFFSET) != RecordLayout.lengthField(size)
            || buf.getInt(RecordLayout.CRC_OFFSET) != (int) crc.getValue()) {
          problem = "bad CRC";
        }
      }
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
    forgetFrom(s, i);
    s.size = at;
    try {
      s.channel.truncate(at);
      io.force(s.channel, true);
    } catch (IOException e) {
      s.writable = false;
      LOG.log(Level.WARNING, "cannot cut damaged queue segment " + s.path, e);
    }
    cutReported(s.path, at, cut, problem);
  }

  private void cutReported(Path segment, long offset, long cut, String problem) {
    LOG.warning(
        "queue of tenant "
            + tenant
            + ": cut "
            + cut
            + " bytes at offset "
            + offset
            + " of segment "
            + segment
            + " ("
            + problem
            + ")");
    try {
      listener.tailCut(tenant, segment, cut);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "queue listener failed", e);
    }
  }

  // ---------------------------------------------------------------- consuming and dropping

  /**
   * Consumes every record up to and including the one at {@code offset} of segment {@code
   * segmentId}; records already consumed or dropped are skipped.
   */
  void ackThrough(long segmentId, long offset) {
    while (records > 0) {
      Segment s = segments.peekFirst();
      if (s.id > segmentId || (s.id == segmentId && s.offset(s.head()) > offset)) {
        break;
      }
      consumeHead(null);
    }
  }

  /**
   * True when a record lies before the one at {@code offset} of segment {@code segmentId}: the head
   * is not consumed up to it yet.
   */
  boolean headBefore(long segmentId, long offset) {
    if (records == 0) {
      return false;
    }
    Segment s = segments.peekFirst();
    return s.id < segmentId || (s.id == segmentId && s.offset(s.head()) < offset);
  }

  /** Drops head records appended before {@code cutoffMillis}. */
  void dropOlderThan(long cutoffMillis, DropTally tally) {
    while (records > 0 && oldestMillis < cutoffMillis) {
      consumeHead(tally);
    }
  }

  /** Drops head records until at most {@code targetBytes} are queued. */
  void dropDownTo(long targetBytes, DropTally tally) {
    while (records > 0 && bytes > targetBytes) {
      consumeHead(tally);
    }
  }

  private void consumeHead(DropTally tally) {
    Segment s = segments.peekFirst();
    int i = s.head();
    int size = s.recordBytes(i);
    int n = s.series(i);
    s.advance();
    addCounts(-size, -1, -n);
    if (tally != null) {
      tally.add(n, size);
    }
    headDirty = true;
    normalizeHead();
    if (records == 0) {
      segments.peekFirst().closeChannel(); // idle tenant: no open file
    }
  }

  /** Takes records {@code from} on out of the index of {@code s}, and out of the counters. */
  private void forgetFrom(Segment s, int from) {
    for (int i = Math.max(from, s.head()); i < s.count(); i++) {
      addCounts(-s.recordBytes(i), -1, -s.series(i));
    }
    s.forgetFrom(from);
    headDirty = true;
  }

  /**
   * Deletes consumed segments at the front (but never the last, which takes appends) and refreshes
   * the oldest record's time.
   */
  private void normalizeHead() {
    while (segments.size() > 1 && segments.peekFirst().consumed()) {
      delete(segments.pollFirst());
    }
    Segment first = segments.peekFirst();
    if (first != null && !first.consumed()) {
      oldestMillis = first.appendMillis(first.head());
    }
    refreshDiskBytes();
  }

  /** Recounts {@link #diskBytes()} from the segments (a few per tenant) and updates the total. */
  private void refreshDiskBytes() {
    long sum = 0;
    for (Segment s : segments) {
      sum += s.size;
    }
    long delta = sum - diskBytes;
    if (delta != 0) {
      diskBytes = sum;
      totals.addDisk(delta);
    }
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
    if (!dirReady || records > 0) {
      return false;
    }
    try {
      new HeadFile(nextSegmentId, 0).write(io, dir, true);
      while (!segments.isEmpty()) {
        delete(segments.pollFirst());
      }
      syncDirectory(dir);
      Files.deleteIfExists(HeadFile.path(dir));
      Files.deleteIfExists(dir.resolve(RecordLayout.TENANT_FILE));
      Files.deleteIfExists(dir);
      syncDirectory(root);
    } catch (IOException e) {
      // A file nobody knows of in the directory, or a disk refusing: the queue stays usable (the
      // next append makes what is missing), and the next check tries again.
      LOG.log(Level.WARNING, "cannot remove the drained queue directory " + dir, e);
      dirReady = Files.isDirectory(dir) && Files.exists(dir.resolve(RecordLayout.TENANT_FILE));
      headDirty = true;
      refreshDiskBytes();
      return false;
    }
    dirReady = false;
    headDirty = false;
    refreshDiskBytes();
    return true;
  }

  private void discardIfEmpty(Segment s) {
    if (s.count() == 0 && segments.peekLast() == s) {
      segments.pollLast();
      delete(s);
    }
  }

  private void delete(Segment s) {
    s.closeChannel();
    s.deleted = true;
    try {
      Files.deleteIfExists(s.path);
    } catch (IOException e) {
      LOG.log(Level.WARNING, "cannot delete consumed queue segment " + s.path, e);
    }
    refreshDiskBytes();
  }

  // ---------------------------------------------------------------- head file and closing

  /**
   * Persists the head if it moved.
   *
   * @param flush write it even if it did not move, and flush it to the device (on close)
   */
  void persistHead(boolean flush) {
    if (!dirReady || (!headDirty && !flush)) {
      return;
    }
    HeadFile head;
    Segment first = segments.peekFirst();
    if (first == null) {
      head = new HeadFile(nextSegmentId, 0);
    } else if (!first.consumed()) {
      head = new HeadFile(first.id, first.offset(first.head()));
    } else {
      head = new HeadFile(first.id, first.size);
    }
    try {
      head.write(io, dir, flush);
      headDirty = false;
    } catch (IOException e) {
      // Not fatal: replay starts from an older position and delivers some records again.
      LOG.log(Level.WARNING, "cannot write queue head file in " + dir, e);
    }
  }

  /** Persists and flushes the head, and closes every channel. */
  void close() {
    persistHead(true);
    for (Segment s : segments) {
      s.closeChannel();
    }
  }

  private void ensureOpen(Segment s) throws IOException {
    if (s.channel == null) {
      s.channel = io.open(s.path, READ_WRITE);
    }
  }

  private void addCounts(long deltaBytes, long deltaRecords, long deltaSeries) {
    bytes += deltaBytes;
    records += deltaRecords;
    series += deltaSeries;
    totals.add(deltaBytes, deltaRecords, deltaSeries);
  }

  static IOException failure(String what, Path path, IOException cause) {
    if (cause instanceof FileAlreadyExistsException || cause instanceof NoSuchFileException) {
      return new IOException(what + " " + path + ": " + cause, cause);
    }
    return new IOException(what + " " + path + ": " + cause.getMessage(), cause);
  }

  /** Dropped records counted for one tenant and reason. */
  static final class DropTally {
    long records;
    long series;
    long bytes;

    void add(long seriesCount, long recordBytes) {
      records++;
      series += seriesCount;
      bytes += recordBytes;
    }
  }
}
