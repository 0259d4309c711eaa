package io.prwrelay.server.queue;

import java.util.ArrayDeque;

/**
 * What one tenant has queued, in memory: its segments oldest first (the last one takes appends),
 * the head (first record not consumed yet, kept by each {@link Segment}) and the counters of the
 * records from the head on.
 *
 * <p>Invariants, restored by every method that changes the index: {@link #bytes()}, {@link
 * #records()} and {@link #series()} are the sums over the records from the head to the end (bytes
 * with their record headers); {@link #oldestMillis()} is the append time of the head record when
 * there is one; no segment but the last is fully consumed (a consumed one before it is deleted at
 * once, through {@link TenantFiles}); {@link #diskBytes()} is the sum of the segments' sizes, and
 * every change of it and of the counters is added to the store's {@link QueueTotals}.
 *
 * <p>Threads: everything but the counter getters runs on the store's I/O thread. The counters are
 * volatile fields with that thread as their only writer, so any thread may read them; a reader can
 * see one counter already updated and another not yet.
 */
final class TenantIndex {
  private final ArrayDeque<Segment> segments = new ArrayDeque<>();
  private final TenantFiles files;
  private final QueueTotals totals;

  /** The head moved (or its file is missing) since the head file was last written. */
  private boolean headMoved;

  private volatile long bytes;
  private volatile long records;
  private volatile long series;
  private volatile long oldestMillis;
  private volatile long diskBytes;

  TenantIndex(TenantFiles files, QueueTotals totals) {
    this.files = files;
    this.totals = totals;
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

  // ---------------------------------------------------------------- segments

  /** The segments, oldest first. */
  Iterable<Segment> segments() {
    return segments;
  }

  /** The oldest segment, or {@code null} when there is none. */
  Segment first() {
    return segments.peekFirst();
  }

  /** The newest segment, the one that takes appends; {@code null} when there is none. */
  Segment last() {
    return segments.peekLast();
  }

  /** Adds a segment read on replay, with every record it holds, as the newest. */
  void addLoaded(Segment s) {
    segments.addLast(s);
    for (int i = 0; i < s.count(); i++) {
      addCounts(s.recordBytes(i), 1, s.series(i));
    }
  }

  /** Adds a segment just created, empty, as the newest. */
  void addNew(Segment s) {
    segments.addLast(s);
    normalize();
  }

  /**
   * Indexes a record just written at {@code at}, the end of {@code s}.
   *
   * @param seriesField the record's series field (count and protocol bit, {@link RecordLayout})
   */
  void appended(Segment s, long at, int recordBytes, long millis, int seriesField) {
    s.add(at, recordBytes, millis, seriesField);
    s.size = at + recordBytes;
    addCounts(recordBytes, 1, RecordLayout.seriesOf(seriesField));
    normalize();
  }

  /** Deletes {@code s} when it holds no record and is the newest (a failed write emptied it). */
  void discardIfEmpty(Segment s) {
    if (s.count() == 0 && segments.peekLast() == s) {
      segments.pollLast();
      delete(s);
    }
  }

  /** Deletes every segment (the queue is drained and its directory goes). */
  void deleteAll() {
    while (!segments.isEmpty()) {
      delete(segments.pollFirst());
    }
  }

  /** Closes every segment's channel. */
  void closeChannels() {
    for (Segment s : segments) {
      s.closeChannel();
    }
  }

  // ---------------------------------------------------------------- head, consuming, dropping

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
    headMoved = true;
    normalize();
    if (records == 0) {
      segments.peekFirst().closeChannel(); // idle tenant: no open file
    }
  }

  /** Takes records {@code from} on out of the index of {@code s}, and out of the counters. */
  void forgetFrom(Segment s, int from) {
    for (int i = Math.max(from, s.head()); i < s.count(); i++) {
      addCounts(-s.recordBytes(i), -1, -s.series(i));
    }
    s.forgetFrom(from);
    headMoved = true;
  }

  /**
   * Restores the invariants after the segments changed: deletes consumed segments at the front (but
   * never the last, which takes appends), refreshes the oldest record's time and the disk bytes.
   */
  void normalize() {
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
  void refreshDiskBytes() {
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

  /** Whether the head moved (or its file is missing) since it was last written. */
  boolean headMoved() {
    return headMoved;
  }

  /** Notes that the head file no longer says where the head is (or is missing). */
  void markHeadMoved() {
    headMoved = true;
  }

  /** Notes that the head file now says where the head is (or is not needed any more). */
  void headWritten() {
    headMoved = false;
  }

  /**
   * The head as its file records it: the first record not consumed, else the end of the last
   * segment, else the start of segment {@code nextSegmentId} (none exists yet).
   */
  HeadFile head(long nextSegmentId) {
    Segment first = segments.peekFirst();
    if (first == null) {
      return new HeadFile(nextSegmentId, 0);
    } else if (!first.consumed()) {
      return new HeadFile(first.id, first.offset(first.head()));
    } else {
      return new HeadFile(first.id, first.size);
    }
  }

  private void delete(Segment s) {
    files.delete(s);
    refreshDiskBytes();
  }

  private void addCounts(long deltaBytes, long deltaRecords, long deltaSeries) {
    bytes += deltaBytes;
    records += deltaRecords;
    series += deltaSeries;
    totals.add(deltaBytes, deltaRecords, deltaSeries);
  }
}
