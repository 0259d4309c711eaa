package io.prwrelay.server.lane;

import io.prwrelay.server.config.ConfigKey;
import io.prwrelay.server.config.DeliveryConfig;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.protocol.WrittenCounts;
import io.prwrelay.server.queue.QueueFullException;

/**
 * How one {@link Fragment} ended.
 *
 * @param kind what happened
 * @param status the downstream's HTTP status, or the status the relay chose ({@code 503} for an
 *     unavailable lane), or 0 for a transport failure
 * @param message one line for the sender and the logs: the downstream's message or the relay's
 *     reason
 * @param retryAfterMillis how long the sender should wait before retrying, or -1 when unknown
 * @param attempts downstream attempts that carried this fragment
 * @param written what the downstream said it wrote of this fragment alone ({@code *-Written}
 *     headers of an answer to a request that carried only this fragment), or {@code null}
 */
public record FragmentOutcome(
    Kind kind,
    int status,
    String message,
    long retryAfterMillis,
    int attempts,
    WrittenCounts written) {
  /** An outcome without the downstream's own written counts. */
  public FragmentOutcome(
      Kind kind, int status, String message, long retryAfterMillis, int attempts) {
    this(kind, status, message, retryAfterMillis, attempts, null);
  }

  /** The kinds of outcome, in the order the sender's answer ranks them. */
  public enum Kind {
    /** Accepted downstream (2xx). */
    DELIVERED,
    /** Written and fsync'd to the tenant's on-disk queue (queue mode). */
    QUEUED,
    /** Rejected downstream with a 4xx other than 429: re-sending cannot help. */
    REJECTED,
    /** The downstream answered 429: the tenant is over its limit. */
    THROTTLED,
    /**
     * Retriable: the downstream failed (5xx, connect error, timeout), the lane is backing off, is
     * full, or the request's deadline passed first.
     */
    UNAVAILABLE
  }

  /** Delivered (2xx) or rejected (a non-retriable 4xx) by the downstream's answer {@code o}. */
  static FragmentOutcome answered(AttemptOutcome o, int attempts, WrittenCounts written) {
    return o.success()
        ? delivered(o.status(), attempts, written)
        : new FragmentOutcome(Kind.REJECTED, o.status(), o.describe(), -1, attempts, written);
  }

  /** The downstream answered 429 ({@code message}) and the fragment is not retried. */
  static FragmentOutcome throttled(
      String message, long retryAfterMillis, int attempts, WrittenCounts written) {
    return new FragmentOutcome(Kind.THROTTLED, 429, message, retryAfterMillis, attempts, written);
  }

  /** The downstream failed ({@code status}, 0 for no answer) and the fragment is not retried. */
  static FragmentOutcome failed(
      int status, String message, long retryAfterMillis, int attempts, WrittenCounts written) {
    return new FragmentOutcome(
        Kind.UNAVAILABLE, status, message, retryAfterMillis, attempts, written);
  }

  /**
   * Answered at once by a lane that holds fragments back for {@code retryAfterMillis}: 429 while
   * throttled, 503 while backing off.
   */
  static FragmentOutcome heldBack(
      Lane.State state, String reason, long retryAfterMillis, int attempts) {
    return state == Lane.State.THROTTLED
        ? new FragmentOutcome(
            Kind.THROTTLED,
            429,
            "the tenant is over its downstream limit (" + reason + ")",
            retryAfterMillis,
            attempts)
        : new FragmentOutcome(
            Kind.UNAVAILABLE,
            503,
            "the tenant's lane is backing off after " + reason,
            retryAfterMillis,
            attempts);
  }

  /** The lane already holds {@code pendingBytes} waiting behind {@code inFlight} sends. */
  static FragmentOutcome laneFull(
      long pendingBytes, int inFlight, long retryAfterMillis, int attempts) {
    return new FragmentOutcome(
        Kind.UNAVAILABLE,
        503,
        "tenant lane is full: "
            + pendingBytes
            + " bytes already wait for "
            + inFlight
            + " downstream requests in flight",
        retryAfterMillis,
        attempts);
  }

  /**
   * The request's deadline passed while the fragment waited in its lane: behind {@code inFlight}
   * sends, or (when {@code backingOffAfter} is not {@code null}) for a backoff after that.
   */
  static FragmentOutcome pastDeadline(
      int inFlight, String backingOffAfter, long retryAfterMillis, int attempts) {
    return new FragmentOutcome(
        Kind.UNAVAILABLE,
        503,
        backingOffAfter == null
            ? "not sent within the request deadline: "
                + inFlight
                + " downstream requests of the tenant still in flight"
            : "not sent within the request deadline: the tenant lane is backing off after "
                + backingOffAfter,
        retryAfterMillis,
        attempts);
  }

  /** Written and fsync'd to the tenant's queue. */
  static FragmentOutcome queued() {
    return new FragmentOutcome(Kind.QUEUED, 204, "", -1, 0);
  }

  /** The tenant's queue refused the fragment ({@code cause}): nothing was queued. */
  static FragmentOutcome notQueued(Throwable cause) {
    return new FragmentOutcome(
        Kind.UNAVAILABLE, 503, "cannot write the tenant's queue: " + cause.getMessage(), 1000, 0);
  }

  /** How long a sender refused a place in a full queue is asked to wait. */
  static final long QUEUE_FULL_RETRY_AFTER_MILLIS = 5_000;

  /**
   * The tenant's queue refused the fragment because a byte bound is reached ({@code e}): nothing
   * was queued and nothing queued was dropped for it.
   */
  static FragmentOutcome queueFull(QueueFullException e) {
    ConfigKey key =
        e.bound() == QueueFullException.Bound.TENANT_BYTES
            ? DeliveryConfig.QUEUE_MAX_TENANT_BYTES
            : DeliveryConfig.QUEUE_MAX_BYTES;
    return new FragmentOutcome(
        Kind.UNAVAILABLE,
        503,
        "the queue is full for tenant "
            + e.tenant()
            + ": "
            + e.getMessage()
            + " ("
            + key.setTo(e.limit())
            + "); nothing queued was dropped for it, send it again once the queue drains",
        QUEUE_FULL_RETRY_AFTER_MILLIS,
        0);
  }

  /**
   * A fragment that would make its tenant's queue on disk was refused by {@link NewQueueGate}:
   * {@code setting} names the bound in force.
   */
  static FragmentOutcome newQueueRefused(
      String tenant, String why, String setting, long retryAfter) {
    return new FragmentOutcome(
        Kind.UNAVAILABLE,
        503,
        "no queue is made for tenant " + tenant + " now: " + why + " (" + setting + ")",
        retryAfter,
        0);
  }

  /**
   * The request body could not be built ({@code e}): 503 (retry later) when memory ran out, else
   * 500.
   */
  static FragmentOutcome cannotCompress(Throwable e, int attempts) {
    return e instanceof OutOfMemoryError
        ? new FragmentOutcome(
            Kind.UNAVAILABLE, 503, "the relay is out of memory for the batch", 5000, attempts)
        : new FragmentOutcome(
            Kind.UNAVAILABLE, 500, "cannot compress the batch: " + e.getMessage(), -1, attempts);
  }

  /**
   * A PRW 2.0 fragment could not be converted to 1.0 for want of memory (503) or for a fault of the
   * relay (500).
   */
  static FragmentOutcome cannotConvert(Throwable e, int attempts) {
    return new FragmentOutcome(
        Kind.UNAVAILABLE,
        e instanceof OutOfMemoryError ? 503 : 500,
        "cannot convert the batch to Remote Write 1.0: " + e.getMessage(),
        -1,
        attempts);
  }

  /** A PRW 2.0 fragment that has no PRW 1.0 form ({@code problem}): rejected for good. */
  static FragmentOutcome unconvertible(String problem, int attempts) {
    return new FragmentOutcome(
        Kind.REJECTED,
        400,
        "cannot convert the batch to Remote Write 1.0: " + problem,
        -1,
        attempts);
  }

  /** Answered by a lane that is closing: no retry hint, the attempts it made. */
  static FragmentOutcome shuttingDown(int attempts) {
    return new FragmentOutcome(Kind.UNAVAILABLE, 503, "the relay is shutting down", -1, attempts);
  }

  /** Answered on its way to a lane, which no loop takes any more: retry in a second. */
  static FragmentOutcome shuttingDown() {
    return new FragmentOutcome(Kind.UNAVAILABLE, 503, "the relay is shutting down", 1000, 0);
  }

  /** No lane for a new tenant: {@code maxLanes} lanes exist and none is idle. */
  static FragmentOutcome noRoom(int maxLanes) {
    return new FragmentOutcome(
        Kind.UNAVAILABLE,
        503,
        "too many tenants are busy at once (relay.lanes.max=" + maxLanes + ")",
        1000,
        0);
  }

  /**
   * No lane for a new tenant: the request's sender may open no more new tenant lanes now ({@link
   * NewLaneBudget}); retry in {@code retryAfterMillis}.
   *
   * @param bound the keys in force, as {@code key=value}
   */
  static FragmentOutcome tooManyNewTenants(String bound, long retryAfterMillis) {
    return new FragmentOutcome(
        Kind.UNAVAILABLE,
        503,
        "this sender sent more new tenants than it may open lanes for (" + bound + ")",
        retryAfterMillis,
        0);
  }

  /** {@link #delivered}'s outcomes of the common first attempts, made once. */
  private static final FragmentOutcome DELIVERED_200 =
      new FragmentOutcome(Kind.DELIVERED, 200, "", -1, 1, null);

  private static final FragmentOutcome DELIVERED_204 =
      new FragmentOutcome(Kind.DELIVERED, 204, "", -1, 1, null);

  /**
   * A fragment accepted downstream with {@code status} (a 2xx) after {@code attempts}: one shared
   * outcome for the usual answers (200 or 204 to the first attempt, no written counts), as an
   * outcome per fragment showed in the allocation profile.
   */
  public static FragmentOutcome delivered(int status, int attempts, WrittenCounts written) {
    if (attempts == 1 && written == null) {
      if (status == 200) {
        return DELIVERED_200;
      }
      if (status == 204) {
        return DELIVERED_204;
      }
    }
    return new FragmentOutcome(Kind.DELIVERED, status, "", -1, attempts, written);
  }

  /** True when the fragment is safe: delivered, or durably queued. */
  public boolean accepted() {
    return kind == Kind.DELIVERED || kind == Kind.QUEUED;
  }

  /** True when the sender should retry the request. */
  public boolean retriable() {
    return kind == Kind.THROTTLED || kind == Kind.UNAVAILABLE;
  }
}
