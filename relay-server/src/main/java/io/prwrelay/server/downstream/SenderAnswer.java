package io.prwrelay.server.downstream;

import java.util.ArrayList;
import java.util.List;

/**
 * What the relay answers the sender, derived from every tenant's final outcome.
 *
 * <ul>
 *   <li>every batch accepted (2xx) → 204;
 *   <li>any batch still retriable at the deadline (connect error, timeout, 5xx, 429) → 503, or 429
 *       when every remaining failure was a 429; {@code Retry-After} carries the largest delay a
 *       downstream asked for. Retriable wins over non-retriable: data that can still arrive must be
 *       re-sent;
 *   <li>otherwise (only non-retriable 4xx) → 400.
 * </ul>
 *
 * Error bodies name each failing tenant and the downstream's message.
 *
 * @param retryAfterSeconds value for {@code Retry-After}, or -1 for none
 */
public record SenderAnswer(int status, String message, long retryAfterSeconds) {
  /** Builds the answer for a finished delivery. */
  public static SenderAnswer of(List<TenantSend> sends) {
    List<TenantSend> retriable = new ArrayList<>();
    List<TenantSend> permanent = new ArrayList<>();
    for (TenantSend s : sends) {
      AttemptOutcome o = s.last();
      if (o == null || o.success()) {
        continue;
      }
      (o.retriable() ? retriable : permanent).add(s);
    }
    if (retriable.isEmpty() && permanent.isEmpty()) {
      return new SenderAnswer(204, "", -1);
    }
    StringBuilder sb = new StringBuilder();
    int failed = retriable.size() + permanent.size();
    sb.append(sends.size() - failed)
        .append(" of ")
        .append(sends.size())
        .append(" tenant batches accepted downstream");
    long retryAfterMillis = -1;
    boolean all429 = true;
    for (TenantSend s : retriable) {
      retryAfterMillis = Math.max(retryAfterMillis, s.last().retryAfterMillis());
      all429 &= s.last().status() == 429;
    }
    if (!retriable.isEmpty()) {
      sb.append("; retriable failures, retry the whole request:");
      for (TenantSend s : retriable) {
        line(sb, s);
      }
    }
    if (!permanent.isEmpty()) {
      sb.append(
          retriable.isEmpty() ? "; rejected:" : "\nrejected (will be re-sent with the retry):");
      for (TenantSend s : permanent) {
        line(sb, s);
      }
    }
    long retryAfterSeconds = retryAfterMillis < 0 ? -1 : (retryAfterMillis + 999) / 1000;
    if (!retriable.isEmpty()) {
      return new SenderAnswer(all429 ? 429 : 503, sb.toString(), retryAfterSeconds);
    }
    return new SenderAnswer(400, sb.toString(), -1);
  }

  private static void line(StringBuilder sb, TenantSend s) {
    sb.append("\n  tenant ")
        .append(s.tenant())
        .append(" (")
        .append(s.series())
        .append(" series, ")
        .append(s.attempts())
        .append(s.attempts() == 1 ? " attempt): " : " attempts): ")
        .append(s.last().describe());
  }
}
