package io.prwrelay.server.metrics;

import io.prwrelay.core.route.TenantRules;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

/**
 * Notices a tenant label that matches (almost) nothing: counts the series routed and those that
 * carried none of {@code relay.tenant.labels}, and once per interval (a minute; the caller
 * schedules {@link #check}) says so when more than half of the interval's series had none. A
 * misspelt label (say {@code serviceid} for {@code service_id}) otherwise merges every tenant into
 * the default one without a sign.
 *
 * <p>{@link #routed} runs once per routed request on any event loop: two {@link LongAdder}s, no
 * allocation. {@link #check} runs on one scheduled thread.
 */
public final class TenantLabelWatch {
  private final LongAdder series = new LongAdder();
  private final LongAdder unlabelled = new LongAdder();

  /** {@code seriesIn} series were routed, {@code withoutLabel} of them carried no tenant label. */
  public void routed(int seriesIn, int withoutLabel) {
    if (seriesIn > 0) {
      series.add(seriesIn);
    }
    if (withoutLabel > 0) {
      unlabelled.add(withoutLabel);
    }
  }

  /**
   * Ends the interval: the warning for it when more than half of its series carried none of the
   * tenant labels, else {@code null}; the counts start again from zero.
   *
   * @param rules the tenant rules in force, named in the warning
   */
  public String check(TenantRules rules) {
    long without = unlabelled.sumThenReset();
    long total = series.sumThenReset();
    if (total == 0 || without * 2 <= total) {
      return null;
    }
    long percent = Math.min(100, without * 100 / total);
    String fate =
        switch (rules.missing()) {
          case DEFAULT -> "they went to the default tenant \"" + rules.defaultTenantId() + "\"";
          case DROP -> "they were dropped (relay.tenant.missing=drop)";
          case REJECT -> "their requests were answered 400 (relay.tenant.missing=reject)";
        };
    return String.format(
        Locale.ROOT,
        "%d%% of %d series in the last minute had none of the tenant labels %s; %s. Check"
            + " relay.tenant.labels against the labels the senders attach",
        percent,
        total,
        rules.labels(),
        fate);
  }
}
