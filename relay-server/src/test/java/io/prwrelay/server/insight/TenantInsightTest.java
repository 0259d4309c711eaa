package io.prwrelay.server.insight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantRouter;
import io.prwrelay.core.route.TenantRules;
import io.prwrelay.server.config.InsightConfig;
import io.prwrelay.server.downstream.AttemptOutcome;
import io.prwrelay.server.it.MiniJson;
import io.prwrelay.server.lane.Lane;
import io.prwrelay.server.queue.QueueLimits;
import io.prwrelay.server.queue.QueueListener;
import io.prwrelay.server.queue.QueueStore;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tenant insight fed by a digesting router, as the relay feeds it, on a clock the test moves:
 * estimates against exact counts, a window that forgets, the bound on tenants, top metric names,
 * the JSON and HTML it renders (tenant IDs with {@code '}, {@code (} and {@code *} escaped), and
 * the queue figures in queue mode.
 */
class TenantInsightTest {
  private static final Duration WINDOW = Duration.ofMinutes(10);
  private static final long BUCKET = WINDOW.toNanos() / TenantWindow.BUCKETS;

  private final AtomicLong now = new AtomicLong(BUCKET * 1000);
  private final TenantRouter router =
      new TenantRouter(TenantRules.builder().labels("service_id").build(), true);

  private TenantInsight insight(int maxTenants) {
    return new TenantInsight(
        new InsightConfig(true, WINDOW, maxTenants), now::get, () -> now.get() / 1_000_000);
  }

  /** One series: {@code __name__}, the tenant, and {@code id} as a label value. */
  private record Series(String tenant, String name, String id) {}

  /** Routes {@code series} in requests of at most 5,000 and records each in {@code insight}. */
  private void send(TenantInsight insight, List<Series> series) {
    WriteRequestEncoder e = new WriteRequestEncoder(1 << 20);
    for (int from = 0; from < series.size(); from += 5000) {
      e.reset();
      for (Series s : series.subList(from, Math.min(series.size(), from + 5000))) {
        e.beginSeries()
            .label("__name__", s.name())
            .label("id", s.id())
            .label("job", "node")
            .label("service_id", s.tenant())
            .sample(1, now.get() / 1_000_000)
            .endSeries();
      }
      ByteBuf in = Unpooled.wrappedBuffer(e.toByteArray());
      RouteResult r = router.route(in, PooledByteBufAllocator.DEFAULT);
      try {
        assertNull(r.error());
        insight.record(r);
      } finally {
        r.clear();
        in.release();
      }
    }
  }

  private static List<Series> distinct(String tenant, String name, int n, Random random) {
    List<Series> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(new Series(tenant, name, Long.toHexString(random.nextLong()) + "-" + i));
    }
    return out;
  }

  private static TenantRow row(TenantInsight insight, String tenant) {
    return insight.rows().stream().filter(r -> r.tenant().equals(tenant)).findFirst().orElse(null);
  }

  /** Moves the clock past the snapshot cache (and by {@code nanos}). */
  private void advance(long nanos) {
    now.addAndGet(Math.max(nanos, TenantInsight.SNAPSHOT_NANOS));
  }

  @Test
  void estimatesStayWithinThreePercentOfTheExactCountFromTenToAMillion() {
    Random random = new Random(24);
    StringBuilder report = new StringBuilder();
    for (int size : new int[] {10, 100, 1_000, 10_000, 100_000, 1_000_000}) {
      int trials = size >= 100_000 ? 1 : 5;
      for (int t = 0; t < trials; t++) {
        TenantInsight insight = insight(10);
        List<Series> series = distinct("t", "m", size, random);
        send(insight, series);
        // Sent again later in the window: the same series, not new ones.
        advance(BUCKET);
        send(insight, series.subList(0, size / 2));
        advance(0);
        long estimate = row(insight, "t").activeSeries();
        double error = (double) (estimate - size) / size;
        report.append(
            String.format(Locale.ROOT, "%,d: %,d (%+.2f%%)%n", size, estimate, error * 100));
        // The label set hash is keyed per process: each run draws new hashes. Five standard
        // errors (1.15 % each) from 100 series on; at 10, two series sharing one of the 8,192
        // registers (about one draw in 200) makes the estimate 9.
        assertTrue(
            size == 10 ? Math.abs(estimate - size) <= 1 : Math.abs(error) <= 5 * 0.0115,
            report.toString());
      }
    }
    System.out.print("active series estimates, exact count: estimate (error)\n" + report);
  }

  @Test
  void seriesNotSentForAWindowAreForgotten() {
    TenantInsight insight = insight(10);
    Random random = new Random(1);
    List<Series> old = distinct("t", "m", 3000, random);
    List<Series> recent = distinct("t", "m", 500, random);
    send(insight, old);
    advance(BUCKET * 9);
    send(insight, recent);
    advance(0);
    assertEquals(3500, row(insight, "t").activeSeries(), 3500 * 0.03);
    // The bucket of `old` leaves the window: only `recent` is left.
    advance(BUCKET + BUCKET / 2);
    assertEquals(500, row(insight, "t").activeSeries(), 500 * 0.03);
    // A window after `recent`, nothing.
    advance(BUCKET * 9);
    assertEquals(0, row(insight, "t").activeSeries());
  }

  @Test
  void growthComparesWithTheWindowAWindowAgo() {
    TenantInsight insight = insight(10);
    Random random = new Random(2);
    List<Series> steady = distinct("t", "m", 1000, random);
    for (int minute = 0; minute < 12; minute++) {
      send(insight, steady);
      advance(BUCKET);
    }
    TenantRow flat = row(insight, "t");
    assertEquals(1.0, flat.growth(), 0.03);
    for (int minute = 0; minute < 3; minute++) {
      send(insight, steady);
      send(insight, distinct("t", "uuid_metric", 1000, random));
      advance(BUCKET);
    }
    send(insight, steady);
    advance(0);
    TenantRow grown = row(insight, "t");
    assertEquals(4000, grown.activeSeries(), 4000 * 0.03);
    assertEquals(4.0, grown.growth(), 0.2);
  }

  @Test
  void ratesAreAveragedOverTheTimeTheTenantWasTracked() {
    TenantInsight insight = insight(10);
    send(insight, distinct("t", "m", 1000, new Random(7)));
    advance(10_000_000_000L);
    TenantWindow.Snapshot w = row(insight, "t").window();
    assertEquals(100, w.seriesPerSecond(), 0.5);
    assertTrue(w.bytesPerSecond() > 100 * 30, "bytes of 100 series/s: " + w.bytesPerSecond());
  }

  @Test
  void topMetricsShowTheNameThatExplodes() {
    TenantInsight insight = insight(10);
    Random random = new Random(3);
    List<Series> series = new ArrayList<>(distinct("t", "http_requests_total", 19_000, random));
    series.addAll(distinct("t", "up", 1000, random));
    java.util.Collections.shuffle(series, random);
    send(insight, series);
    advance(0);
    List<TenantWindow.TopMetric> top = row(insight, "t").window().topMetrics();
    assertEquals("http_requests_total", top.get(0).name());
    // Five standard errors of a share of 0.95 in a sample of 256 series (0.0136 each).
    assertEquals(0.95, top.get(0).share(), 0.07);
    assertEquals("up", top.get(1).name());
  }

  /** Three names holding 60 %, 30 % and 10 % of {@code size} distinct series of tenant t. */
  private static List<Series> threeNames(int size, Random random) {
    List<Series> series = new ArrayList<>(distinct("t", "big", size * 6 / 10, random));
    series.addAll(distinct("t", "mid", size * 3 / 10, random));
    series.addAll(distinct("t", "small", size - size * 9 / 10, random));
    java.util.Collections.shuffle(series, random);
    return series;
  }

  @Test
  void metricSharesOfActiveSeriesStayWithinTheirStandardErrorsFromAThousandToAMillion() {
    Random random = new Random(25);
    StringBuilder report = new StringBuilder();
    double worst = 0;
    double squares = 0;
    int errors = 0;
    for (int size : new int[] {1_000, 10_000, 100_000, 1_000_000}) {
      int trials = size >= 100_000 ? 1 : 5;
      for (int t = 0; t < trials; t++) {
        TenantInsight insight = insight(10);
        List<Series> series = threeNames(size, random);
        send(insight, series);
        // Sent again later in the window: the same series, not new ones.
        advance(BUCKET);
        send(insight, series.subList(0, size / 2));
        advance(0);
        TenantRow r = row(insight, "t");
        Map<String, Double> exact = Map.of("big", 0.6, "mid", 0.3, "small", 0.1);
        report.append(String.format(Locale.ROOT, "%,d:", size));
        for (TenantWindow.TopMetric m : r.window().topMetrics()) {
          double error = m.share() - exact.get(m.name());
          worst = Math.max(worst, Math.abs(error));
          report.append(String.format(Locale.ROOT, " %s %.3f (%+.3f)", m.name(), m.share(), error));
          // Each share within five of its standard errors (sqrt(p(1 - p) / n), n the sample's
          // size: 256, or one in eight of the series below 2,048 of them), and the errors' root
          // mean square, in standard errors, checked below.
          double n = Math.min(256, size / 8);
          double se = Math.sqrt(exact.get(m.name()) * (1 - exact.get(m.name())) / n);
          assertTrue(Math.abs(error) <= 5 * se, report.toString());
          squares += (error / se) * (error / se);
          errors++;
        }
        report.append('\n');
        assertEquals(
            List.of("big", "mid", "small"),
            r.window().topMetrics().stream().map(TenantWindow.TopMetric::name).toList(),
            report.toString());
      }
    }
    // The label set hash is keyed per process, so every run draws another sample: over 36
    // estimates the root mean square error is about one standard error; 1.6 is beyond any run but
    // about one in a million.
    double rms = Math.sqrt(squares / errors);
    assertTrue(rms <= 1.6, "root mean square error " + rms + " standard errors\n" + report);
    System.out.printf(
        Locale.ROOT,
        "metric shares of the active series (exact 0.6, 0.3, 0.1), worst error %.3f, rms %.2f"
            + " standard errors%n%s",
        worst,
        rms,
        report);
  }

  /** {@code steady} sent, and {@code fresh} new series of {@code name} of tenant t. */
  private void sendWithNew(
      TenantInsight insight, List<Series> steady, String name, int fresh, Random random) {
    List<Series> request = new ArrayList<>(steady);
    if (fresh > 0) {
      request.addAll(distinct(steady.get(0).tenant(), name, fresh, random));
    }
    send(insight, request);
  }

  @Test
  void theExplodingMetricTopsTheListWhileAMinorityOfTheTraffic() {
    TenantInsight insight = insight(10);
    Random random = new Random(26);
    List<Series> steady = new ArrayList<>();
    for (int m = 0; m < 50; m++) {
      steady.addAll(distinct("t", "metric_" + m, 400, random));
    }
    // Every 10 s: the 20,000 steady series, and 2,000 series of exploding_metric never seen before.
    long step = 10_000_000_000L;
    for (int i = 0; i < 30; i++) {
      sendWithNew(insight, steady, "exploding_metric", 2000, random);
      advance(step);
    }
    TenantRow r = row(insight, "t");
    TenantWindow.TopMetric top = r.window().topMetrics().get(0);
    assertEquals("exploding_metric", top.name(), r.window().topMetrics().toString());
    // 60,000 of 80,000 active series; 2,000 of 22,000 series sent per request.
    assertEquals(0.75, top.share(), 0.08);
    // A lower bound (51 names, 32 counters a bucket): 2,000 of the 22,000 series of a request.
    assertTrue(top.trafficShare() > 0 && top.trafficShare() <= 2000.0 / 22_000, top.toString());
    // The difference of two estimates of about 80,000 series, each with a standard error of 1.15 %,
    // over 60 to 120 s: one standard error is about 5 % of 200, and the hash is keyed per process,
    // so each run draws another error. Five standard errors, as the other estimates here allow.
    assertEquals(200, r.newSeriesPerSecond(), 200 * 0.25);
    // Every series first seen in that time is one of exploding_metric: its part is all of it.
    assertEquals(r.newSeriesPerSecond(), top.newSeriesPerSecond(), 200 * 0.02);
    assertTrue(r.exploding());
    for (TenantWindow.TopMetric m : r.window().topMetrics().subList(1, 5)) {
      assertTrue(m.name().startsWith("metric_"), m.toString());
      assertEquals(0, m.newSeriesPerSecond(), m.toString());
    }
  }

  @Test
  void aSteadyExplosionStaysFlaggedForHalfAnHourAndSteadySeriesNeverAre() {
    TenantInsight insight = insight(10);
    Random random = new Random(27);
    List<Series> steady = distinct("t", "m", 1000, random);
    List<Series> quiet = distinct("q", "m", 5000, random);
    long step = 10_000_000_000L;
    List<String> flagged = new ArrayList<>();
    for (int i = 0; i < 12 * 6 + 30 * 6; i++) {
      boolean exploding = i >= 12 * 6;
      // From minute 12: 300 new series every 10 s (30/s) for 30 minutes.
      sendWithNew(insight, steady, "uuid_metric", exploding ? 300 : 0, random);
      send(insight, quiet);
      advance(step);
      TenantRow t = row(insight, "t");
      TenantRow q = row(insight, "q");
      if (i >= 12) {
        assertEquals(0, q.newSeriesPerSecond(), "steady series are never new, step " + i);
        assertTrue(!q.exploding());
      }
      if (exploding && i >= 12 * 6 + 6) {
        // A minute into it and from then on.
        assertEquals(30, t.newSeriesPerSecond(), 30 * 0.3, "step " + i);
        assertTrue(t.exploding(), "step " + i + ": " + t.newSeriesPerSecond());
      }
      if (!exploding && i >= 12) {
        assertEquals(0, t.newSeriesPerSecond(), "step " + i);
      }
      if (t.exploding()) {
        flagged.add(Integer.toString(i));
      }
    }
    assertTrue(!flagged.contains(Integer.toString(12 * 6 - 1)), flagged.toString());
  }

  @Test
  void newSeriesAreKnownOnceATenantWasTrackedForAWholeBucketAndANewTenantCanExplode() {
    TenantInsight insight = insight(10);
    Random random = new Random(28);
    List<Series> steady = distinct("t", "m", 2000, random);
    List<Series> newcomer = distinct("n", "m", 500, random);
    long step = 15_000_000_000L;
    // Four steps a bucket; tracking starts a third into a bucket (the test clock's bucket 1000).
    now.addAndGet(BUCKET / 3);
    for (int i = 0; i < 4 * 4; i++) {
      send(insight, steady);
      sendWithNew(insight, newcomer, "uuid_metric", 1000, random);
      advance(0);
      TenantRow t = row(insight, "t");
      TenantRow n = row(insight, "n");
      long epoch = now.get() / BUCKET;
      now.addAndGet(step - TenantInsight.SNAPSHOT_NANOS);
      if (epoch < 1002) {
        assertTrue(Double.isNaN(t.newSeriesPerSecond()), "step " + i);
        assertTrue(!n.exploding());
      } else {
        // From the second bucket after tracking began: the first whole one is the baseline. The
        // rate is over at least a bucket, so it reaches the newcomer's within that bucket.
        assertEquals(0, t.newSeriesPerSecond(), "step " + i);
        // Within 30 %: the rate is the difference of two estimates, each of a hash keyed per
        // process, so its error is a few of the tenant estimate's standard errors of the window.
        assertTrue(n.newSeriesPerSecond() <= 1000 / 15.0 * 1.3, "step " + i);
        if (epoch >= 1003) {
          assertEquals(1000 / 15.0, n.newSeriesPerSecond(), 1000 / 15.0 * 0.3, "step " + i);
          assertTrue(n.exploding(), "step " + i);
        }
      }
    }
  }

  @Test
  void tracksAtMostMaxTenantsAndKeepsTheMostActive() {
    TenantInsight insight = insight(3);
    Random random = new Random(4);
    for (String t : List.of("a", "b", "c", "d", "e")) {
      send(insight, distinct(t, "m", t.compareTo("c") <= 0 ? 100 : 50, random));
    }
    assertEquals(3, insight.trackedTenants());
    advance(0);
    assertEquals(
        List.of("a", "b", "c"), insight.rows().stream().map(TenantRow::tenant).sorted().toList());
    // In the next bucket e explodes and b goes quiet: at the start of the one after, e replaces b.
    advance(BUCKET);
    send(insight, distinct("a", "m", 100, random));
    send(insight, distinct("c", "m", 100, random));
    send(insight, distinct("e", "m", 5000, random));
    advance(BUCKET);
    send(insight, distinct("e", "m", 10, random));
    advance(0);
    assertEquals(3, insight.trackedTenants());
    assertEquals(
        List.of("a", "c", "e"), insight.rows().stream().map(TenantRow::tenant).sorted().toList());
  }

  @Test
  void jsonCarriesEveryDocumentedFieldAndEscapesTenantIds() {
    TenantInsight insight = insight(10);
    String odd = "a'b(c)*!x";
    send(insight, distinct(odd, "m<script>", 800, new Random(5)));
    insight.stateChanged(odd, Lane.State.THROTTLED, "downstream answered 429", 1_000_000_000L);
    insight.attempt(odd, 1, new AttemptOutcome(429, "rate \"limited\" <b>", 1000), 1);
    advance(0);
    String json = TenantsJson.render(insight);
    assertTrue(!json.contains("<") && !json.contains("'"), json);
    @SuppressWarnings("unchecked")
    Map<String, Object> doc = (Map<String, Object>) MiniJson.parse(json);
    assertEquals(600.0, doc.get("window_seconds"));
    @SuppressWarnings("unchecked")
    Map<String, Object> t = ((List<Map<String, Object>>) doc.get("tenants")).get(0);
    assertEquals(
        List.of(
            "tenant",
            "active_series_estimate",
            "active_series_window_ago",
            "active_series_growth",
            "new_series_per_second",
            "exploding",
            "series_per_second",
            "bytes_per_second",
            "top_metrics",
            "lane",
            "queue_bytes",
            "queue_oldest_age_seconds",
            "last_error"),
        List.copyOf(t.keySet()));
    assertEquals(odd, t.get("tenant"));
    assertEquals(800.0, (Double) t.get("active_series_estimate"), 800 * 0.03);
    @SuppressWarnings("unchecked")
    Map<String, Object> metric = ((List<Map<String, Object>>) t.get("top_metrics")).get(0);
    assertEquals(
        List.of(
            "name", "share", "active_series_estimate", "new_series_per_second", "traffic_share"),
        List.copyOf(metric.keySet()));
    assertEquals("m<script>", metric.get("name"));
    assertEquals(1.0, metric.get("share"));
    assertEquals(1.0, metric.get("traffic_share"));
    assertNull(t.get("new_series_per_second"), "not known in the tenant's first bucket");
    assertNull(metric.get("new_series_per_second"));
    assertEquals(false, t.get("exploding"));
    @SuppressWarnings("unchecked")
    Map<String, Object> lane = (Map<String, Object>) t.get("lane");
    assertEquals("throttled", lane.get("state"));
    assertEquals("downstream answered 429", lane.get("reason"));
    assertTrue(((String) lane.get("since")).endsWith("Z"));
    assertNull(t.get("queue_bytes"), "sync mode has no queue");
    @SuppressWarnings("unchecked")
    Map<String, Object> error = (Map<String, Object>) t.get("last_error");
    assertEquals(429.0, error.get("status"));
    assertEquals("downstream answered 429: rate \"limited\" <b>", error.get("message"));
  }

  @Test
  void queueModeShowsEachTenantsQueuedBytesAndOldestAge(@TempDir Path dir) throws Exception {
    TenantInsight insight = insight(10);
    try (QueueStore store =
        QueueStore.open(
            dir,
            new QueueLimits(
                QueueLimits.DEFAULT_SEGMENT_BYTES, 1L << 30, Duration.ofHours(1), 1L << 31),
            QueueListener.NONE)) {
      insight.queues(store);
      send(insight, distinct("queued", "m", 10, new Random(8)));
      send(insight, distinct("empty", "m", 10, new Random(9)));
      ByteBuf payload = Unpooled.wrappedBuffer(new byte[1000]);
      try {
        store.queue("queued").append(payload, 10, now.get() / 1_000_000).get(10, TimeUnit.SECONDS);
      } finally {
        payload.release();
      }
      advance(30_000_000_000L);
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> tenants =
          (List<Map<String, Object>>)
              ((Map<String, Object>) MiniJson.parse(TenantsJson.render(insight))).get("tenants");
      for (Map<String, Object> t : tenants) {
        if (t.get("tenant").equals("queued")) {
          assertTrue((Double) t.get("queue_bytes") >= 1000, t.toString());
          assertEquals(30.0, (Double) t.get("queue_oldest_age_seconds"), 1.0);
        } else {
          assertEquals(0.0, t.get("queue_bytes"));
          assertEquals(0.0, t.get("queue_oldest_age_seconds"));
        }
      }
      assertTrue(TenantsPage.render(insight).contains("<th class=\"num\">Queue</th>"));
    }
  }

  @Test
  void thePageEscapesTenantIdsMetricNamesAndMessages() {
    TenantInsight insight = insight(10);
    String odd = "a'b(c)*\"x";
    send(insight, distinct("a'b(c)*", "m<script>alert(1)</script>", 800, new Random(6)));
    insight.attempt("a'b(c)*", 1, new AttemptOutcome(503, "<img src=x onerror=alert(1)>", -1), 1);
    advance(0);
    String html = TenantsPage.render(insight);
    assertTrue(html.contains("data-tenant=\"a&#39;b(c)*\""), html);
    assertTrue(html.contains(">a&#39;b(c)*</td>"), html);
    assertTrue(html.contains("m&lt;script&gt;alert(1)&lt;/script&gt;"), html);
    assertTrue(html.contains("&lt;img src=x onerror=alert(1)&gt;"), html);
    assertTrue(!html.contains("<img") && !html.contains("<script>alert"), html);
    assertTrue(!html.contains("http://") && !html.contains("https://"), "no external asset");
    assertEquals("&quot;&#39;&lt;&gt;&amp;", Escape.html("\"'<>&"));
    assertTrue(Escape.json(odd).equals("\"a\\u0027b(c)*\\\"x\""), Escape.json(odd));
  }
}
