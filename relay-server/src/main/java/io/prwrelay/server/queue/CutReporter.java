package io.prwrelay.server.queue;

import java.nio.file.Path;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Says that part of a tenant's segment was cut because it was damaged (on replay or on a read): one
 * warning line naming the tenant, the segment, the offset, the bytes cut and the problem, and one
 * {@link QueueListener#tailCut} call. A listener that throws is logged, never propagated: a cut
 * must not fail the replay or the read that found it.
 */
record CutReporter(String tenant, QueueListener listener) {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.queue");

  /**
   * Reports {@code cut} bytes of {@code segment} cut at {@code offset} because of {@code problem}.
   */
  void report(Path segment, long offset, long cut, String problem) {
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
}
