package io.prwrelay.server.queue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * One segment file of a tenant queue and the in-memory index of its records: offset, size, append
 * time and series count of each, in file order, plus the index of the first record not yet
 * consumed. Confined to the store's I/O thread.
 *
 * <p>The index is what lets the queue drop or acknowledge records from the head, count bytes and
 * series, and know the oldest record's age without reading the file; it costs 24 bytes per record.
 */
final class Segment {
  final long id;
  final Path path;

  /** Open channel, or {@code null} while the segment is idle. */
  FileChannel channel;

  /** End of the valid data: the next record goes here. */
  long size;

  /** False once a write or flush failed here; the next append rolls to a new segment. */
  boolean writable = true;

  /** The file was deleted (fully consumed or dropped). */
  boolean deleted;

  private long[] offsets = new long[16];
  private int[] sizes = new int[16];
  private long[] millis = new long[16];
  private int[] series = new int[16];
  private int count;

  /** Index of the first record not consumed yet; {@code head == count} when all are. */
  private int head;

  Segment(long id, Path path, long size) {
    this.id = id;
    this.path = path;
    this.size = size;
  }

  /**
   * Indexes a record that ends the segment's valid data.
   *
   * @param seriesField the record's series field (count and protocol bit, {@link RecordLayout})
   */
  void add(long offset, int recordBytes, long appendMillis, int seriesField) {
    if (count == offsets.length) {
      int n = count * 2;
      offsets = Arrays.copyOf(offsets, n);
      sizes = Arrays.copyOf(sizes, n);
      millis = Arrays.copyOf(millis, n);
      series = Arrays.copyOf(series, n);
    }
    offsets[count] = offset;
    sizes[count] = recordBytes;
    millis[count] = appendMillis;
    series[count] = seriesField;
    count++;
  }

  int count() {
    return count;
  }

  int head() {
    return head;
  }

  /** Consumes the head record. */
  void advance() {
    head++;
  }

  boolean consumed() {
    return head >= count;
  }

  long offset(int i) {
    return offsets[i];
  }

  int recordBytes(int i) {
    return sizes[i];
  }

  long appendMillis(int i) {
    return millis[i];
  }

  int series(int i) {
    return RecordLayout.seriesOf(series[i]);
  }

  /** Whether record {@code i}'s payload is Remote Write 2.0. */
  boolean remoteWrite2(int i) {
    return RecordLayout.isRemoteWrite2(series[i]);
  }

  /** Index of the first record that starts at or after {@code offset}. */
  int indexAtOrAfter(long offset) {
    int i = Arrays.binarySearch(offsets, 0, count, offset);
    return i >= 0 ? i : -i - 1;
  }

  /** Forgets the records from index {@code from} on (they were cut or rolled back). */
  void forgetFrom(int from) {
    count = from;
    head = Math.min(head, from);
  }

  /** Closes the channel, if open; the segment stays usable and reopens when needed. */
  void closeChannel() {
    FileChannel c = channel;
    channel = null;
    if (c != null) {
      try {
        c.close();
      } catch (IOException e) {
        // Nothing was pending on it: every write was flushed or failed already.
      }
    }
  }

  @Override
  public String toString() {
    return path.toString();
  }
}
