package io.prwrelay.server.queue;

import java.util.Collection;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The bounds of {@link QueueLimits} applied to a store's queues, and the periodic cleanup: refuses
 * records past a byte bound, or (as {@link QueueFullPolicy} says) drops the tenant's own oldest
 * records; drops records past the age bound; counts what it drops by tenant and {@link DropReason}
 * and reports it to the {@link QueueListener}; and removes the files of drained queues. I/O thread
 * only; it holds no state of its own: what is queued is each {@link TenantLog}'s, the totals are
 * the store's.
 */
final class Retention {
  private static final Logger LOG = Logger.getLogger("io.prwrelay.queue");

  private final QueueLimits limits;
  private final QueueTotals totals;
  private final QueueListener listener;

  Retention(QueueLimits limits, QueueTotals totals, QueueListener listener) {
    this.limits = limits;
    this.totals = totals;
    this.listener = listener;
  }

  /**
   * Makes room for a record of {@code recordBytes} of {@code log}'s tenant, or refuses it. First
   * the tenant's records past the age bound are dropped (counted, {@link DropReason#AGE}). Then,
   * for the tenant's byte bound and for the total bound in turn, when the record does not fit:
   * under {@link QueueFullPolicy#REFUSE} it is refused; under {@link QueueFullPolicy#DROP_OLDEST}
   * the tenant's own oldest records are dropped to make room (counted), and it is refused when all
   * of them would not make enough. Another tenant's records are never dropped for it: a sender
   * whose data is spread over many tenants can fill the queues only up to the bound, and never
   * takes what another sender was told is queued.
   *
   * @throws QueueFullException when the record is refused; nothing was dropped for it then
   */
  void makeRoom(TenantLog log, int recordBytes, long nowMillis) throws QueueFullException {
    dropOld(log, nowMillis);
    boolean drop = limits.fullPolicy() == QueueFullPolicy.DROP_OLDEST;
    long tenantExcess = log.bytes() + recordBytes - limits.tenantMaxBytes();
    long totalExcess = totals.bytes() + recordBytes - limits.totalMaxBytes();
    if (tenantExcess > 0 && !drop) {
      throw new QueueFullException(
          log.tenant,
          QueueFullException.Bound.TENANT_BYTES,
          limits.tenantMaxBytes(),
          log.bytes(),
          recordBytes);
    }
    // Dropping for the tenant bound also makes room under the total: only what is left over must
    // come from the tenant's records as well, and only if they can give all of it.
    long totalAfterTenantDrop = totalExcess - Math.max(0, tenantExcess);
    if (totalAfterTenantDrop > 0
        && (!drop || log.bytes() - Math.max(0, tenantExcess) < totalAfterTenantDrop)) {
      throw new QueueFullException(
          log.tenant,
          QueueFullException.Bound.TOTAL_BYTES,
          limits.totalMaxBytes(),
          totals.bytes(),
          recordBytes);
    }
    if (tenantExcess > 0) {
      DropTally tally = new DropTally();
      log.dropDownTo(limits.tenantMaxBytes() - recordBytes, tally);
      report(log, DropReason.BYTES, tally);
    }
    totalExcess = totals.bytes() + recordBytes - limits.totalMaxBytes();
    if (totalExcess > 0) {
      DropTally tally = new DropTally();
      log.dropDownTo(log.bytes() - totalExcess, tally);
      report(log, DropReason.TOTAL, tally);
    }
  }

  /**
   * The periodic check of {@code some} queues: drops records older than the age bound at {@code
   * nowMillis}, persists heads that moved, and removes the files of drained queues.
   */
  void expire(Collection<FileTenantQueue> some, long nowMillis) {
    for (FileTenantQueue q : some) {
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
