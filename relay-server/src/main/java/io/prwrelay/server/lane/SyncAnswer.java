package io.prwrelay.server.lane;

import io.prwrelay.server.lane.FragmentOutcome.Kind;
import java.util.ArrayList;
import java.util.List;

/**
 * The sender's answer in sync mode, from the outcomes of its request's fragments (DESIGN §5):
 *
 * <ul>
 *   <li>every tenant delivered (or nothing to deliver) → 204;
 *   <li>any tenant retriable (throttled, downstream unavailable, lane backing off, deadline) → 429
 *       when every retriable one was throttled, else 503; {@code Retry-After} carries the largest
 *       delay known. Retriable wins over rejected: data that can still arrive must be re-sent;
 *   <li>otherwise (only rejections) → 400.
 * </ul>
 *
 * The message names each failing tenant with its series, attempts and the reason.
 *
 * @param retryAfterSeconds value for {@code Retry-After}, or -1 for none
 */
public record SyncAnswer(int status, String message, long retryAfterSeconds) {
  /** The answer for a request whose fragments ended with {@code results}. */
  public static SyncAnswer of(List<SenderRequest.Result> results) {
    List<SenderRequest.Result> retriable = new ArrayList<>();
    List<SenderRequest.Result> rejected = new ArrayList<>();
    for (SenderRequest.Result r : results) {
      if (r.outcome().retriable()) {
        retriable.add(r);
      } else if (r.outcome().kind() == Kind.REJECTED) {
        rejected.add(r);
      }
    }
    if (retriable.isEmpty() && rejected.isEmpty()) {
      return new SyncAnswer(204, "", -1);
    }
    StringBuilder sb = new StringBuilder();
    int failed = retriable.size() + rejected.size();
    sb.append(results.size() - failed)
        .append(" of ")
        .append(results.size())
        .append(" tenant batches accepted downstream");
    long retryAfterMillis = -1;
    boolean allThrottled = true;
    for (SenderRequest.Result r : retriable) {
      retryAfterMillis = Math.max(retryAfterMillis, r.outcome().retryAfterMillis());
      allThrottled &= r.outcome().kind() == Kind.THROTTLED;
    }
    if (!retriable.isEmpty()) {
      sb.append("; retriable failures, retry the whole request:");
      for (SenderRequest.Result r : retriable) {
        line(sb, r);
      }
    }
    if (!rejected.isEmpty()) {
      sb.append(
          retriable.isEmpty() ? "; rejected:" : "\nrejected (will be re-sent with the retry):");
      for (SenderRequest.Result r : rejected) {
        line(sb, r);
      }
    }
    if (!retriable.isEmpty()) {
      long seconds = retryAfterMillis < 0 ? -1 : (retryAfterMillis + 999) / 1000;
      return new SyncAnswer(allThrottled ? 429 : 503, sb.toString(), seconds);
    }
    return new SyncAnswer(400, sb.toString(), -1);
  }

  private static void line(StringBuilder sb, SenderRequest.Result r) {
    int attempts = r.outcome().attempts();
    sb.append("\n  tenant ")
        .append(r.tenant())
        .append(" (")
        .append(r.counts().series())
        .append(" series, ")
        .append(attempts)
        .append(attempts == 1 ? " attempt): " : " attempts): ")
        .append(r.outcome().message());
  }
}
