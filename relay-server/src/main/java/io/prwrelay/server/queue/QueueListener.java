package io.prwrelay.server.queue;

import java.nio.file.Path;

/**
 * Hears what a {@link QueueStore} threw away, so the owner can count it (by tenant and reason).
 * Called on the store's I/O thread: implementations must be quick and must not block (increment a
 * counter, nothing more). An exception thrown here is logged and otherwise ignored.
 */
public interface QueueListener {
  /** A listener that ignores everything. */
  QueueListener NONE = new QueueListener() {};

  /**
   * Queued records were dropped, oldest first, to keep a bound. One call covers the records of one
   * tenant dropped for one reason by one operation.
   *
   * @param bytes on-disk bytes of the dropped records (payload plus record headers)
   */
  default void dropped(String tenant, DropReason reason, long records, long series, long bytes) {}

  /**
   * The end of a segment did not validate (torn by a crash, or damaged) and was cut off at the last
   * good record; the records in the cut part are lost. Also logged by the store, once per cut.
   *
   * @param bytes bytes removed from the segment (the segment file is deleted when its header is
   *     bad)
   */
  default void tailCut(String tenant, Path segment, long bytes) {}
}
