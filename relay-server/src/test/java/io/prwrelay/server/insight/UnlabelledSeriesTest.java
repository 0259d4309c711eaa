package io.prwrelay.server.insight;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.prwrelay.core.route.TenantRules;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The last minute's series without a tenant label, by fate, on a clock the test moves. */
class UnlabelledSeriesTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  /** Near the ticker's wrap and negative, as {@code System.nanoTime} may be. */
  private final AtomicLong now = new AtomicLong(-7 * SECOND - 3);

  private final UnlabelledSeries unlabelled = new UnlabelledSeries(now::get);

  private String figures() {
    UnlabelledSeries.Figures f = unlabelled.lastMinute();
    return f.defaultTenant() + "/" + f.dropped() + "/" + f.rejected();
  }

  @Test
  void countsEachFateForAMinuteInTenSecondSteps() {
    unlabelled.add(UnlabelledSeries.Fate.DEFAULT_TENANT, 3);
    unlabelled.add(UnlabelledSeries.Fate.DEFAULT_TENANT, 1);
    unlabelled.add(UnlabelledSeries.Fate.DROPPED, 0);
    assertEquals("4/0/0", figures());
    now.addAndGet(30 * SECOND);
    unlabelled.add(UnlabelledSeries.Fate.DROPPED, 5);
    unlabelled.add(UnlabelledSeries.Fate.REJECTED, 7);
    assertEquals("4/5/7", figures());
    now.addAndGet(30 * SECOND);
    assertEquals("0/5/7", figures(), "the first adds are a minute old");
    now.addAndGet(30 * SECOND);
    assertEquals("0/0/0", figures());
  }

  @Test
  void aBucketReusedAMinuteLaterStartsFromZero() {
    unlabelled.add(UnlabelledSeries.Fate.REJECTED, 9);
    now.addAndGet(60 * SECOND);
    unlabelled.add(UnlabelledSeries.Fate.REJECTED, 2);
    assertEquals("0/0/2", figures());
    now.addAndGet(6 * 60 * SECOND);
    unlabelled.add(UnlabelledSeries.Fate.DEFAULT_TENANT, 1);
    assertEquals("1/0/0", figures(), "nothing of a bucket last used long ago");
  }

  @Test
  void namesTheTenantLabelsAndTheDefaultTenantInForce() {
    assertEquals("service_id", unlabelled.lastMinute().labels());
    assertEquals("anonymous", unlabelled.lastMinute().defaultTenantId());
    unlabelled.rules(TenantRules.builder().labels("team", "service_id").build());
    assertEquals("team, service_id", unlabelled.lastMinute().labels());
  }
}
