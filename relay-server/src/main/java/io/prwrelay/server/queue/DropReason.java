package io.prwrelay.server.queue;

/** Why queued records were dropped: which bound of {@link QueueLimits} they were over. */
public enum DropReason {
  /** The tenant's queue would have held more than its byte bound. */
  BYTES("bytes"),
  /** The records were older than the tenant age bound. */
  AGE("age"),
  /** All queues together would have held more than the total byte bound. */
  TOTAL("total");

  private final String label;

  DropReason(String label) {
    this.label = label;
  }

  /**
   * The value used for this reason in metric labels and logs: {@code bytes}, {@code age}, {@code
   * total}.
   */
  public String label() {
    return label;
  }
}
