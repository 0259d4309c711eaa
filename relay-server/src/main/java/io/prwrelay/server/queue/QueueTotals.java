package io.prwrelay.server.queue;

/**
 * Bytes, records and series queued across all tenants of a store, and the bytes of their segment
 * files on disk. Written only by the store's I/O thread (so plain volatile writes are enough), read
 * from any thread.
 */
final class QueueTotals {
  private volatile long bytes;
  private volatile long records;
  private volatile long series;
  private volatile long diskBytes;

  void add(long deltaBytes, long deltaRecords, long deltaSeries) {
    bytes += deltaBytes;
    records += deltaRecords;
    series += deltaSeries;
  }

  void addDisk(long deltaBytes) {
    diskBytes += deltaBytes;
  }

  long diskBytes() {
    return diskBytes;
  }

  long bytes() {
    return bytes;
  }

  long records() {
    return records;
  }

  long series() {
    return series;
  }
}
