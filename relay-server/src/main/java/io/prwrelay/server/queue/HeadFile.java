package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.RecordLayout.HEAD_FILE_BYTES;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.EnumSet;
import java.util.zip.CRC32C;

/**
 * A tenant queue's read position, persisted in the {@code head} file: every record before segment
 * {@code segmentId} at {@code offset} has been consumed.
 *
 * <p>The file is overwritten in place (20 bytes at offset 0, inside one disk sector) and carries a
 * CRC. It is not flushed on every acknowledgement, only on close: after a crash it may be older
 * than the last acknowledgement, or unreadable, and the queue then delivers the records from an
 * older position again (at-least-once), never fewer.
 */
record HeadFile(long segmentId, long offset) {
  /** The head file in a tenant directory. */
  static Path path(Path tenantDir) {
    return tenantDir.resolve(RecordLayout.HEAD_FILE);
  }

  /** Reads the head file; {@code null} when it is missing or fails its checks. */
  static HeadFile read(SegmentIo io, Path tenantDir) throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(HEAD_FILE_BYTES);
    try (FileChannel ch = io.open(path(tenantDir), EnumSet.of(StandardOpenOption.READ))) {
      while (buf.hasRemaining()) {
        if (ch.read(buf, buf.position()) < 0) {
          return null;
        }
      }
    } catch (NoSuchFileException e) {
      return null;
    }
    CRC32C crc = new CRC32C();
    crc.update(buf.array(), 0, 16);
    if ((int) crc.getValue() != buf.getInt(16)) {
      return null;
    }
    long segmentId = buf.getLong(0);
    long offset = buf.getLong(8);
    return segmentId < 0 || offset < 0 ? null : new HeadFile(segmentId, offset);
  }

  /**
   * Writes this position.
   *
   * @param flush also flush it to the device (on close)
   */
  void write(SegmentIo io, Path tenantDir, boolean flush) throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(HEAD_FILE_BYTES);
    buf.putLong(0, segmentId).putLong(8, offset);
    CRC32C crc = new CRC32C();
    crc.update(buf.array(), 0, 16);
    buf.putInt(16, (int) crc.getValue());
    try (FileChannel ch =
        io.open(path(tenantDir), EnumSet.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE))) {
      while (buf.hasRemaining()) {
        ch.write(buf, buf.position());
      }
      if (flush) {
        io.force(ch, false);
      }
    }
  }
}
