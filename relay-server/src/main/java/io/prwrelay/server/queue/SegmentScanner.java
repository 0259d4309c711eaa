package io.prwrelay.server.queue;

import static io.prwrelay.server.queue.RecordLayout.CRC_OFFSET;
import static io.prwrelay.server.queue.RecordLayout.LENGTH_OFFSET;
import static io.prwrelay.server.queue.RecordLayout.MILLIS_OFFSET;
import static io.prwrelay.server.queue.RecordLayout.RECORD_HEADER_BYTES;
import static io.prwrelay.server.queue.RecordLayout.SERIES_OFFSET;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.zip.CRC32C;

/**
 * Validates the records of a segment file from a start offset and indexes the good ones, stopping
 * at the first record that has a bad length, does not fit in the file, or fails its CRC. Reads the
 * file through one window of {@value #WINDOW_BYTES} bytes, so a record of any size costs no
 * allocation.
 */
final class SegmentScanner {
  static final int WINDOW_BYTES = 1 << 20;

  private final ByteBuffer window = ByteBuffer.allocateDirect(WINDOW_BYTES);
  private final CRC32C crc = new CRC32C();
  private FileChannel channel;
  private long windowStart;
  private int windowLength;

  /**
   * Indexes the valid records of {@code segment} from {@code from} up to {@code fileSize}.
   *
   * @return {@code null} when every byte up to {@code fileSize} is valid records, else what is
   *     wrong at {@code segment.size} (where the valid data ends)
   */
  String scan(FileChannel channel, Segment segment, long from, long fileSize) throws IOException {
    this.channel = channel;
    this.windowStart = 0;
    this.windowLength = 0;
    long pos = from;
    segment.size = from;
    while (pos < fileSize) {
      long left = fileSize - pos;
      if (left < RECORD_HEADER_BYTES) {
        return "torn record header (" + left + " of " + RECORD_HEADER_BYTES + " bytes)";
      }
      int at = fill(pos, RECORD_HEADER_BYTES);
      int length = window.getInt(at + LENGTH_OFFSET);
      long recordBytes = RecordLayout.recordBytesOfLength(length);
      if (recordBytes < 0) {
        return "bad record length " + Integer.toUnsignedString(length);
      }
      if (recordBytes > left) {
        return "torn record (" + left + " of " + recordBytes + " bytes)";
      }
      int storedCrc = window.getInt(at + CRC_OFFSET);
      long millis = window.getLong(at + MILLIS_OFFSET);
      int seriesField = window.getInt(at + SERIES_OFFSET);
      if (checksum(pos + MILLIS_OFFSET, recordBytes - MILLIS_OFFSET) != storedCrc) {
        return "bad CRC";
      }
      segment.add(pos, (int) recordBytes, millis, seriesField);
      pos += recordBytes;
      segment.size = pos;
    }
    return null;
  }

  private int checksum(long pos, long length) throws IOException {
    crc.reset();
    while (length > 0) {
      int n = (int) Math.min(length, WINDOW_BYTES);
      int at = fill(pos, n);
      crc.update(window.duplicate().position(at).limit(at + n));
      pos += n;
      length -= n;
    }
    return (int) crc.getValue();
  }

  /**
   * Makes {@code [pos, pos + n)} of the file available in the window ({@code n <= WINDOW_BYTES},
   * and the caller has checked the range lies inside the file); returns where it starts.
   */
  private int fill(long pos, int n) throws IOException {
    if (pos >= windowStart && pos + n <= windowStart + windowLength) {
      return (int) (pos - windowStart);
    }
    window.clear();
    long at = pos;
    while (window.position() < n) {
      int r = channel.read(window, at);
      if (r < 0) {
        throw new IOException("segment shrank while being read");
      }
      at += r;
    }
    windowStart = pos;
    windowLength = window.position();
    return 0;
  }
}
