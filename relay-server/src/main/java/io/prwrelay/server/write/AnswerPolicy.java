package io.prwrelay.server.write;

import io.prwrelay.server.config.DeliveryConfig;
import io.prwrelay.server.config.LimitsConfig;
import io.prwrelay.server.lane.BatchResult;
import io.prwrelay.server.lane.FragmentOutcome;
import io.prwrelay.server.lane.FragmentOutcome.Kind;
import io.prwrelay.server.protocol.WrittenCounts;
import java.util.ArrayList;
import java.util.List;

/**
 * What the relay answers the sender of a write request, from the outcome of each of its tenant
 * batches (docs/ARCHITECTURE.md#delivery-semantics):
 *
 * <ul>
 *   <li>every batch accepted downstream or durably queued, or no batch at all → 204;
 *   <li>any batch retriable (429, 5xx, connect error, timeout, a lane backing off or full, the
 *       deadline, a queue that cannot be written) → 429 when every retriable one was a 429, else
 *       503. Retriable wins over rejected: data that can still arrive must be re-sent. {@code
 *       Retry-After} carries the largest delay known, but only when no batch of the request was
 *       accepted (see below);
 *   <li>otherwise (only non-retriable 4xx) → 400.
 * </ul>
 *
 * <p>A downstream's delay is about its tenant, and the tenant's lane keeps it: while it lasts the
 * lane sends nothing of that tenant and answers its batches at once. A sender told to wait stops
 * its whole queue (Prometheus, vmagent and Alloy retry a batch before they send the next), so a
 * request whose other tenants were delivered, by this attempt or an earlier one of the same body,
 * gets no {@code Retry-After}: the sender retries after its own backoff, the ledger skips what was
 * delivered, and the throttled tenants' batches are answered by their lanes without a downstream
 * request (and under {@code relay.delivery.throttled.policy=drop} that retry is answered 400).
 * Mimir's {@code Retry-After} is 6 s and more; passed on, it held a Prometheus with {@code
 * retry_on_http_429} 6 s per batch and its healthy tenants fell further behind every second. A
 * request of only failing tenants keeps the largest delay: waiting costs its sender nothing of
 * another tenant's.
 *
 * <p>Series a tenant's series limit left out at the route step ({@link #withLimited}) make an
 * answer that would have been 2xx a 400 naming those tenants, as Cortex and Mimir answer a push
 * they ingested in part: the rest of the request was delivered, and re-sending it cannot help. A
 * retriable answer stays as it is (the retry meets the limit again).
 *
 * <p>A Remote Write 2.0 sender also gets {@link #written} in every answer: a 2xx only when every
 * tenant's batch is safe, so never for a partial write.
 *
 * <p>Error bodies name each failing tenant with its series, attempts and the reason (the first
 * {@value #MAX_TENANT_LINES} of each kind, and how many more there are).
 */
final class AnswerPolicy {
  /** Failing tenants named in an answer, per kind of failure; the rest are counted. */
  static final int MAX_TENANT_LINES = 20;

  private AnswerPolicy() {}

  /** The answer for a delivered request; keeps the connection open. */
  static Answer fromResults(List<? extends BatchResult> results) {
    int n = results.size();
    int i = 0;
    while (i < n && succeeded(results.get(i).outcome())) {
      i++;
    }
    if (i == n) {
      return NO_CONTENT; // the usual answer: nothing else to build
    }
    List<BatchResult> retriable = new ArrayList<>();
    List<BatchResult> rejected = new ArrayList<>();
    for (BatchResult r : results) {
      if (r.outcome().retriable()) {
        retriable.add(r);
      } else if (r.outcome().kind() == Kind.REJECTED) {
        rejected.add(r);
      }
    }
    StringBuilder sb = new StringBuilder();
    int failed = retriable.size() + rejected.size();
    sb.append(results.size() - failed)
        .append(" of ")
        .append(results.size())
        .append(" tenant batches accepted downstream");
    long retryAfterMillis = -1;
    boolean allThrottled = true;
    for (BatchResult r : retriable) {
      retryAfterMillis = Math.max(retryAfterMillis, r.outcome().retryAfterMillis());
      allThrottled &= r.outcome().kind() == Kind.THROTTLED;
    }
    if (!retriable.isEmpty()) {
      sb.append("; retriable failures, retry the whole request:");
      lines(sb, retriable);
    }
    if (!rejected.isEmpty()) {
      sb.append(
          retriable.isEmpty() ? "; rejected:" : "\nrejected (will be re-sent with the retry):");
      lines(sb, rejected);
    }
    if (retriable.isEmpty()) {
      return Answer.of(400, sb.toString());
    }
    // Accepted batches (failed counts only the retriable and the rejected): no delay for the
    // sender, whose other tenants are through (class Javadoc).
    boolean someAccepted = failed < results.size();
    long retryAfterSeconds =
        retryAfterMillis < 0 || someAccepted ? -1 : (retryAfterMillis + 999) / 1000;
    return new Answer(allThrottled ? 429 : 503, sb.toString(), retryAfterSeconds, false);
  }

  private static final Answer NO_CONTENT = Answer.of(204, "");

  /** An outcome {@link #fromResults} lists neither as retriable nor as rejected. */
  private static boolean succeeded(FragmentOutcome o) {
    return !o.retriable() && o.kind() != Kind.REJECTED;
  }

  /**
   * The answer to a request whose only retriable failures are throttled tenants, after it was
   * answered 429 as often or as long as {@code relay.delivery.throttled.*} allow: 400, so that the
   * sender drops it and moves on (its own failed-samples counters show the loss), naming the
   * throttled tenants and what became of the others.
   *
   * @param answers 429 answers the body got before
   * @param sinceNanos time since the first of them
   */
  static Answer throttledDropped(
      List<? extends BatchResult> results, int answers, long sinceNanos) {
    List<BatchResult> throttled = new ArrayList<>();
    List<BatchResult> rejected = new ArrayList<>();
    for (BatchResult r : results) {
      if (r.outcome().kind() == Kind.THROTTLED) {
        throttled.add(r);
      } else if (!r.outcome().accepted()) {
        rejected.add(r);
      }
    }
    StringBuilder sb = new StringBuilder();
    sb.append(results.size() - throttled.size() - rejected.size())
        .append(" of ")
        .append(results.size())
        .append(" tenant batches accepted downstream; the batches of tenants over their downstream")
        .append(" limit were dropped after ")
        .append(answers)
        .append(answers == 1 ? " answer" : " answers")
        .append(" of 429 to this request over ")
        .append(String.format(java.util.Locale.ROOT, "%.1f", sinceNanos / 1e9))
        .append(" s (")
        .append(DeliveryConfig.THROTTLED_POLICY.setTo("drop"))
        .append("); do not send it again:");
    lines(sb, throttled);
    if (!rejected.isEmpty()) {
      sb.append("\nrejected:");
      lines(sb, rejected);
    }
    return Answer.of(400, sb.toString());
  }

  /**
   * {@code answer} for a request some of whose series their tenants' series limits left out: a 2xx
   * becomes 400 naming them (the rest was delivered: do not send it again), a 400 names them too, a
   * retriable answer is kept.
   */
  static Answer withLimited(Answer answer, List<LimitedSeries> limited) {
    if (limited.isEmpty() || answer.status() == 429 || answer.status() >= 500) {
      return answer;
    }
    StringBuilder sb = new StringBuilder();
    if (answer.status() < 300) {
      sb.append("the request was delivered except series over their tenant's series limit at the")
          .append(" relay, which were dropped (")
          .append(LimitsConfig.MAX_SERIES_PER_TENANT.name())
          .append("); do not send it again:");
    } else {
      sb.append(answer.message()).append("\nover their tenant's series limit, dropped:");
    }
    int n = Math.min(limited.size(), MAX_TENANT_LINES);
    for (int i = 0; i < n; i++) {
      LimitedSeries l = limited.get(i);
      sb.append("\n  tenant ")
          .append(l.tenant())
          .append(" (")
          .append(l.series())
          .append(" series new to the tenant beyond its limit of ")
          .append(l.maxSeries())
          .append(" active series)");
    }
    if (limited.size() > n) {
      sb.append("\n  ... and ").append(limited.size() - n).append(" more tenants");
    }
    return Answer.of(400, sb.toString());
  }

  /**
   * What a request's tenants wrote, for a Remote Write 2.0 sender's {@code *-Written} headers: per
   * tenant the downstream's own counts where its answer carried them, else the batch's counts when
   * it was delivered (or durably queued, or delivered by an earlier attempt), else nothing.
   */
  static WrittenCounts written(List<? extends BatchResult> results) {
    WrittenCounts sum = WrittenCounts.ZERO;
    for (BatchResult r : results) {
      WrittenCounts relayed =
          r.outcome().accepted()
              ? new WrittenCounts(r.samples(), r.histograms(), r.exemplars())
              : WrittenCounts.ZERO;
      WrittenCounts own = r.outcome().written();
      sum = sum.plus(own == null ? relayed : own.orElse(relayed));
    }
    return sum;
  }

  /**
   * One line per failing tenant, at most {@link #MAX_TENANT_LINES}, then how many more there are: a
   * request with many thousands of tenants gets an answer of a few lines, not megabytes.
   */
  private static void lines(StringBuilder sb, List<? extends BatchResult> failed) {
    int n = Math.min(failed.size(), MAX_TENANT_LINES);
    for (int i = 0; i < n; i++) {
      line(sb, failed.get(i));
    }
    if (failed.size() > n) {
      sb.append("\n  ... and ").append(failed.size() - n).append(" more tenants");
    }
  }

  private static void line(StringBuilder sb, BatchResult r) {
    FragmentOutcome o = r.outcome();
    sb.append("\n  tenant ")
        .append(r.tenant())
        .append(" (")
        .append(r.series())
        .append(" series, ")
        .append(o.attempts())
        .append(o.attempts() == 1 ? " attempt): " : " attempts): ")
        .append(o.message());
  }
}
