package io.prwrelay.server.queue;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The bounds of {@link QueueLimits} applied to a store's queues, and the periodic cleanup: drops
 * the oldest records, counts them by tenant and {@link DropReason} and reports them to the {@link
 * QueueListener}, and removes the files of drained queues. I/O thread only; it holds no state of
 * its own: what is queued is each {@link TenantLog}'s, the totals are the store's.
 */
final class Retention {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.queue");

  private final QueueLimits limits;
  private final QueueTotals totals;
  private final QueueListener listener;
  private final Collection<FileTenantQueue> queues;

  /**
   * @param queues every queue of the store, a live view
   */
  Retention(
      QueueLimits limits,
      QueueTotals totals,
      QueueListener listener,
      Collection<FileTenantQueue> queues) {
    this.limits = limits;
    this.totals = totals;
    this.listener = listener;
    this.queues = queues;
  }

  /**
   * Drops old records so that a record of {@code recordBytes} fits every bound: first this tenant's
   * records past the age bound, then its oldest records over its byte bound, then, while all queues
   * together are over the total bound, the oldest records of the tenant holding the most bytes
   * (ties: the one with the oldest record). Taking from the largest queue keeps one tenant's
   * backlog from pushing out the few records of tenants that are healthy.
   */
  void makeRoom(TenantLog log, int recordBytes, long nowMillis) {
    dropOld(log, nowMillis);
    DropTally tally = new DropTally();
    log.dropDownTo(limits.tenantMaxBytes() - recordBytes, tally);
    report(log, DropReason.BYTES, tally);
    long excess = totals.bytes() + recordBytes - limits.totalMaxBytes();
    if (excess <= 0) {
      return;
    }
    Map<TenantLog, DropTally> tallies = new HashMap<>();
    while (excess > 0) {
      TenantLog largest = null;
      long second = 0;
      for (FileTenantQueue q : queues) {
        TenantLog l = q.log;
        if (l.records() == 0) {
          continue;
        }
        if (largest == null
            || l.bytes() > largest.bytes()
            || (l.bytes() == largest.bytes() && l.oldestMillis() < largest.oldestMillis())) {
          if (largest != null) {
            second = Math.max(second, largest.bytes());
          }
          largest = l;
        } else {
          second = Math.max(second, l.bytes());
        }
      }
      if (largest == null) {
        return;
      }
      long target = Math.min(Math.max(largest.bytes() - excess, second), largest.bytes() - 1);
      largest.dropDownTo(target, tallies.computeIfAbsent(largest, l -> new DropTally()));
      excess = totals.bytes() + recordBytes - limits.totalMaxBytes();
    }
    tallies.forEach((l, t) -> report(l, DropReason.TOTAL, t));
    tallies.keySet().forEach(l -> l.persistHead(false));
  }

  /**
   * The periodic check of every queue: drops records older than the age bound at {@code nowMillis},
   * persists heads that moved, and removes the files of drained queues.
   */
  void expire(long nowMillis) {
    for (FileTenantQueue q : queues) {
      dropOld(q.log, nowMillis);
      q.log.persistHead(false);
      q.log.removeIfDrained();
    }
  }

  private void dropOld(TenantLog log, long nowMillis) {
    DropTally tally = new DropTally();
    log.dropOlderThan(nowMillis - limits.tenantMaxAge().toMillis(), tally);
    report(log, DropReason.AGE, tally);
  }

  private void report(TenantLog log, DropReason reason, DropTally tally) {
    if (tally.records == 0) {
      return;
    }
    try {
      listener.dropped(log.tenant, reason, tally.records, tally.series, tally.bytes);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "queue listener failed", e);
    }
  }
}
