package io.prwrelay.server.queue;

/**
 * Records dropped from one tenant's queue for one {@link DropReason}, counted while they are
 * dropped and reported to the {@link QueueListener} once the drop is over. I/O thread only.
 */
final class DropTally {
  long records;
  long series;
  long bytes;

  /** Counts one dropped record. */
  void add(long seriesCount, long recordBytes) {
    records++;
    series += seriesCount;
    bytes += recordBytes;
  }
}
