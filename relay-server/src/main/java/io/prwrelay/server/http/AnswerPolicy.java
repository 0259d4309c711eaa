package io.prwrelay.server.http;

import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.downstream.TenantOutcome;
import java.util.ArrayList;
import java.util.List;

/**
 * What the relay answers the sender of a write request, from every tenant batch's final outcome
 * (DESIGN §5):
 *
 * <ul>
 *   <li>every batch accepted (2xx), or no batch at all → 204;
 *   <li>any batch still retriable at the deadline (connect error, timeout, 5xx, 429) → 503, or 429
 *       when every remaining failure was a 429; {@code Retry-After} carries the largest delay a
 *       downstream asked for. Retriable wins over non-retriable: data that can still arrive must be
 *       re-sent;
 *   <li>otherwise (only non-retriable 4xx) → 400.
 * </ul>
 *
 * Error bodies name each failing tenant and the downstream's message.
 */
final class AnswerPolicy {
  private AnswerPolicy() {}

  /** The answer for a delivered request; keeps the connection open. */
  static Answer fromOutcomes(List<TenantOutcome> outcomes) {
    List<TenantOutcome> retriable = new ArrayList<>();
    List<TenantOutcome> permanent = new ArrayList<>();
    for (TenantOutcome t : outcomes) {
      AttemptOutcome o = t.last();
      if (o == null || o.success()) {
        continue;
      }
      (o.retriable() ? retriable : permanent).add(t);
    }
    if (retriable.isEmpty() && permanent.isEmpty()) {
      return Answer.of(204, "");
    }
    StringBuilder sb = new StringBuilder();
    int failed = retriable.size() + permanent.size();
    sb.append(outcomes.size() - failed)
        .append(" of ")
        .append(outcomes.size())
        .append(" tenant batches accepted downstream");
    long retryAfterMillis = -1;
    boolean all429 = true;
    for (TenantOutcome t : retriable) {
      retryAfterMillis = Math.max(retryAfterMillis, t.last().retryAfterMillis());
      all429 &= t.last().status() == 429;
    }
    if (!retriable.isEmpty()) {
      sb.append("; retriable failures, retry the whole request:");
      for (TenantOutcome t : retriable) {
        line(sb, t);
      }
    }
    if (!permanent.isEmpty()) {
      sb.append(
          retriable.isEmpty() ? "; rejected:" : "\nrejected (will be re-sent with the retry):");
      for (TenantOutcome t : permanent) {
        line(sb, t);
      }
    }
    if (retriable.isEmpty()) {
      return Answer.of(400, sb.toString());
    }
    long retryAfterSeconds = retryAfterMillis < 0 ? -1 : (retryAfterMillis + 999) / 1000;
    return new Answer(all429 ? 429 : 503, sb.toString(), retryAfterSeconds, false);
  }

  private static void line(StringBuilder sb, TenantOutcome t) {
    sb.append("\n  tenant ")
        .append(t.tenant())
        .append(" (")
        .append(t.series())
        .append(" series, ")
        .append(t.attempts())
        .append(t.attempts() == 1 ? " attempt): " : " attempts): ")
        .append(t.last().describe());
  }
}
