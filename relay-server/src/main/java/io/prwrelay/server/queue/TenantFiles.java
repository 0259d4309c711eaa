package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.RecordLayout.SEGMENT_HEADER_BYTES;
import static java.nio.file.StandardOpenOption.CREATE;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.TRUNCATE_EXISTING;
import static java.nio.file.StandardOpenOption.WRITE;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.EnumSet;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The files of one tenant's queue directory ({@code <dir>/<tenant dir>/}): making the directory and
 * its {@code tenant} file, creating, opening and deleting segments, writing the {@code head} file,
 * and taking the directory away once the queue is drained. Every creation and removal is followed
 * by a flush of the directory holding it, so it survives a crash. I/O thread only.
 *
 * <p>State: {@link #ready()}, whether the directory and its {@code tenant} file are there as far as
 * this queue knows. A new tenant's queue starts without them and makes them on its first append; a
 * replayed one starts with them; {@link #removeDirectory()} takes them away.
 */
final class TenantFiles {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.queue");
  private static final Set<StandardOpenOption> READ_WRITE = EnumSet.of(READ, WRITE);
  private static final Set<StandardOpenOption> NEW_FILE = EnumSet.of(CREATE_NEW, READ, WRITE);

  final String tenant;
  final Path dir;
  final SegmentIo io;

  /** The queue directory, parent of {@link #dir}. */
  private final Path root;

  /** Written on the I/O thread; read there, and by {@link QueueStore#release} on a lane's loop. */
  private volatile boolean ready;

  TenantFiles(String tenant, Path root, Path dir, SegmentIo io, boolean ready) {
    this.tenant = tenant;
    this.root = root;
    this.dir = dir;
    this.io = io;
    this.ready = ready;
  }

  /** Whether the directory and its {@code tenant} file exist (as far as this queue knows). */
  boolean ready() {
    return ready;
  }

  /** Makes the directory and its {@code tenant} file, unless {@link #ready()}. */
  void ensureDir() throws IOException {
    if (ready) {
      return;
    }
    makeDir();
    ready = true;
  }

  /**
   * Makes the directory and its {@code tenant} file, flushed, whether or not they are there; does
   * not change {@link #ready()} ({@link #markReady()} does): any thread, as {@link #createSegment}
   * may be, while the I/O thread leaves this tenant's files alone.
   */
  void makeDir() throws IOException {
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
      throw SegmentIo.failure("cannot create queue directory", dir, e);
    }
  }

  /** The directory and its {@code tenant} file were made by {@link #makeDir()}. */
  void markReady() {
    ready = true;
  }

  /**
   * Creates segment {@code id} with its header (not flushed) and flushes the directory: the segment
   * returned is open, empty, and {@link RecordLayout#SEGMENT_HEADER_BYTES} long. Touches no state
   * of this object, so a thread making a new tenant's files may call it. On failure nothing is left
   * of it but, at worst, a headerless file that replay deletes.
   */
  Segment createSegment(long id) throws IOException {
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
      throw SegmentIo.failure("cannot create queue segment", path, e);
    }
    s.size = SEGMENT_HEADER_BYTES;
    return s;
  }

  /** Opens a segment written before for reading and writing. */
  FileChannel openExisting(Path segment) throws IOException {
    return io.open(segment, READ_WRITE);
  }

  /** Opens the channel of {@code s} unless it is open. */
  void ensureOpen(Segment s) throws IOException {
    if (s.channel == null) {
      s.channel = openExisting(s.path);
    }
  }

  /** Closes and deletes a segment (consumed, or emptied by a failed write); logs a failure. */
  void delete(Segment s) {
    s.closeChannel();
    s.deleted = true;
    try {
      Files.deleteIfExists(s.path);
    } catch (IOException e) {
      LOG.log(Level.WARNING, "cannot delete consumed queue segment " + s.path, e);
    }
  }

  /** The {@code head} file, or {@code null} when it is missing or fails its checks. */
  HeadFile readHead() throws IOException {
    return HeadFile.read(io, dir);
  }

  /**
   * Writes the {@code head} file.
   *
   * @param flush also flush it to the device
   */
  void writeHead(HeadFile head, boolean flush) throws IOException {
    head.write(io, dir, flush);
  }

  /**
   * Steps (3) to (5) of removing a drained queue (see {@link TenantLog#removeIfDrained()}), once
   * its head was written past its segments and they were deleted: flushes the directory, so the
   * segments are gone for good, deletes the {@code head} and {@code tenant} files and the
   * directory, and flushes the queue directory. No longer {@link #ready()} when it returns.
   *
   * @throws IOException when a step fails; {@link #recheck()} then says what is left
   */
  void removeDirectory() throws IOException {
    syncDirectory(dir);
    Files.deleteIfExists(HeadFile.path(dir));
    Files.deleteIfExists(dir.resolve(RecordLayout.TENANT_FILE));
    Files.deleteIfExists(dir);
    syncDirectory(root);
    ready = false;
  }

  /** After a removal failed part way: {@link #ready()} again if the directory and file are left. */
  void recheck() {
    ready = Files.isDirectory(dir) && Files.exists(dir.resolve(RecordLayout.TENANT_FILE));
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
}
