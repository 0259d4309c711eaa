package io.prwrelay.server.queue;

/**
 * What an append does when its record would take its tenant's queue past {@link
 * QueueLimits#tenantMaxBytes()} or all queues past {@link QueueLimits#totalMaxBytes()}.
 */
public enum QueueFullPolicy {
  /**
   * The append fails with a {@link QueueFullException} and nothing queued is dropped: every record
   * answered as queued stays until it is delivered or past the age bound. The default.
   */
  REFUSE("refuse"),
  /**
   * The tenant's own oldest records are dropped to make room ({@link DropReason#BYTES} for its own
   * bound, {@link DropReason#TOTAL} for the total), never another tenant's; when even all of its
   * own records would not make room under the total bound, the append is refused as under {@link
   * #REFUSE}. Records already answered as queued may then be lost (counted).
   */
  DROP_OLDEST("drop-oldest");

  private final String label;

  QueueFullPolicy(String label) {
    this.label = label;
  }

  /** The value of the policy in configuration: {@code refuse}, {@code drop-oldest}. */
  public String label() {
    return label;
  }
}
