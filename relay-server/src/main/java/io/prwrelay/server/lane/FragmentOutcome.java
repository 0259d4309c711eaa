package io.prwrelay.server.lane;

import io.prwrelay.server.downstream.WrittenCounts;

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
