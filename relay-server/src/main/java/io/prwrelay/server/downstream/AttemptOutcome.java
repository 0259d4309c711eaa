package io.prwrelay.server.downstream;

import io.prwrelay.server.protocol.WrittenCounts;

/**
 * How one downstream attempt ended.
 *
 * @param status HTTP status, or {@link #TRANSPORT_FAILURE} when no response arrived (connect error,
 *     reset, timeout)
 * @param message downstream response body (truncated) or the transport problem
 * @param retryAfterMillis delay the downstream asked for with {@code Retry-After}, or -1
 * @param written what the downstream said it wrote (Remote Write 2.0 headers), or {@code null}
 */
public record AttemptOutcome(
    int status, String message, long retryAfterMillis, WrittenCounts written) {
  /** An outcome without {@code *-Written} headers. */
  public AttemptOutcome(int status, String message, long retryAfterMillis) {
    this(status, message, retryAfterMillis, null);
  }

  /** {@link #status()} when no HTTP response was received. */
  public static final int TRANSPORT_FAILURE = 0;

  /** An attempt that got no HTTP response; {@code message} says why. */
  public static AttemptOutcome transport(String message) {
    return new AttemptOutcome(TRANSPORT_FAILURE, message, -1);
  }

  public boolean success() {
    return status >= 200 && status < 300;
  }

  /** Connect errors, timeouts, 5xx and 429 can succeed later; other 4xx never will. */
  public boolean retriable() {
    return status == TRANSPORT_FAILURE || status == 429 || status >= 500;
  }

  /**
   * A 400 with which Cortex and Mimir answer a push that took the tenant over one of its series or
   * metadata limits ({@code per-user series limit of N exceeded}, {@code per-metric ...}, and the
   * same for metadata; Mimir adds {@code err-mimir-max-series-per-user} and its siblings). Such a
   * push was written but for what went beyond the limit, whichever sender's series those were:
   * sending it again in halves finds no bad batch, it only writes the rest once more.
   */
  public boolean overTenantLimit() {
    return status == 400
        && (message.contains("series limit of")
            || message.contains("metadata limit of")
            || message.contains("err-mimir-max-series-per-")
            || message.contains("err-mimir-max-metadata-per-"));
  }

  /** A short label for metrics and logs: the status code or {@code error}. */
  public String code() {
    return status == TRANSPORT_FAILURE ? "error" : Integer.toString(status);
  }

  /** One line naming the outcome, for answers to the sender and logs. */
  public String describe() {
    String what = status == TRANSPORT_FAILURE ? message : "downstream answered " + status;
    if (status != TRANSPORT_FAILURE && !message.isEmpty()) {
      what += ": " + message;
    }
    return what;
  }
}
