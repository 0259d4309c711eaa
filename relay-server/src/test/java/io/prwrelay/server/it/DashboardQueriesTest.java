package io.prwrelay.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prwrelay.server.it.PrometheusProcess.Series;
import io.prwrelay.server.testing.Await;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testkit.ScriptedDownstream.Reply;
import io.prwrelay.testkit.WriteRequestEncoder;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Grafana dashboard {@code docker/grafana/prw-relay-dashboard.json} against a real Prometheus
 * scraping two relays under load: one in sync mode whose downstream throttles one tenant (429), one
 * in queue mode whose downstream refuses one tenant (503), so that its queue fills and drops. Every
 * panel's query, with the dashboard's variables filled in as Grafana would, must parse; the panels
 * of the rows about traffic, tenants and failures must return data; and no panel may query a metric
 * the relays do not export.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DashboardQueriesTest {
  private static final Path DASHBOARD =
      Path.of("..", "docker", "grafana", "prw-relay-dashboard.json");

  /** Rows whose every panel must show data while the relays are under load. */
  private static final Set<String> ROWS_WITH_DATA = Set.of("Senders", "Tenants", "Failures");

  /** How Grafana fills the variables in: every job value, every instance, every tenant. */
  private static final Map<String, String> VARIABLES =
      Map.of(
          "$__rate_interval", "10s",
          "$job", "prw-relay",
          "$instance", ".*",
          "$tenant", ".*");

  private static final String THROTTLED = "tenant-1";
  private static final String FAILING = "tenant-3";

  /** Limited to 10 of its 20 series by the sync relay's overrides file: some are always dropped. */
  private static final String LIMITED = "tenant-2";

  private static final int TENANTS = 5;

  private static RelayFixture sync;
  private static RelayFixture queue;
  private static PrometheusProcess prometheus;
  private static Thread sender;
  private static volatile boolean sending = true;

  @BeforeAll
  static void relaysUnderLoadScrapedByPrometheus(@TempDir Path queueDir) throws Exception {
    PrometheusProcess.assumeAvailable();
    Path overrides = java.nio.file.Files.createTempFile("limits", ".overrides");
    overrides.toFile().deleteOnExit();
    java.nio.file.Files.writeString(overrides, LIMITED + ".max-series-per-tenant = 10\n");
    sync =
        new RelayFixture(
            // A one-minute window: new series per second are known after one 6-second bucket.
            Map.of(
                "relay.limits.overrides-file", overrides.toString(), "relay.insight.window", "1m"),
            d -> d.rule(THROTTLED, () -> Reply.retryAfter(429, "1")));
    queue =
        new RelayFixture(
            Map.of(
                "relay.delivery.mode", "queue",
                "relay.delivery.queue.dir", queueDir.toString(),
                "relay.delivery.queue.max-age", "1s",
                "relay.tenant.missing", "drop"),
            d -> d.rule(FAILING, () -> Reply.status(503, "unavailable")));
    prometheus = PrometheusProcess.start(scrapeConfig(sync.uri("/"), queue.uri("/")));
    // A body that is not a WriteRequest: relay_series_rejected_total{reason="malformed"}.
    sync.write(new byte[] {0x0a, 0x7f, 0x01});
    sender = new Thread(DashboardQueriesTest::send, "dashboard-sender");
    sender.start();
    boolean ready =
        Await.within(
            Duration.ofSeconds(90),
            () -> panelsWithoutData(ROWS_WITH_DATA).isEmpty() && !queueDropped().isEmpty());
    assertTrue(
        ready,
        () ->
            "panels without data after 90 s: "
                + panelsWithoutData(ROWS_WITH_DATA)
                + "\n"
                + prometheus.logTail());
  }

  @AfterAll
  static void stop() throws Exception {
    sending = false;
    if (sender != null) {
      sender.join(10_000);
    }
    for (AutoCloseable c : new AutoCloseable[] {prometheus, queue, sync}) {
      if (c != null) {
        c.close();
      }
    }
  }

  @Test
  void theDashboardHasADatasourceAndATenantVariableAndEveryPanelUsesTheDatasource() {
    Map<?, ?> dashboard = dashboard();
    assertTrue(((Number) dashboard.get("schemaVersion")).intValue() >= 36, "schemaVersion");
    Map<String, Map<?, ?>> variables = new LinkedHashMap<>();
    for (Object v : (List<?>) ((Map<?, ?>) dashboard.get("templating")).get("list")) {
      variables.put((String) ((Map<?, ?>) v).get("name"), (Map<?, ?>) v);
    }
    assertEquals(Set.of("datasource", "job", "instance", "tenant"), variables.keySet());
    assertEquals("datasource", variables.get("datasource").get("type"));
    assertEquals("prometheus", variables.get("datasource").get("query"));
    assertEquals(Boolean.TRUE, variables.get("tenant").get("multi"));
    assertEquals(".*", variables.get("tenant").get("allValue"));
    Set<Double> ids = new TreeSet<>();
    for (Map<?, ?> panel : panels(dashboard)) {
      assertTrue(ids.add((Double) panel.get("id")), "panel ids are unique: " + panel.get("id"));
      if ("row".equals(panel.get("type"))) {
        continue;
      }
      assertEquals("${datasource}", ((Map<?, ?>) panel.get("datasource")).get("uid"), title(panel));
      assertFalse(targets(panel).isEmpty(), title(panel));
    }
    List<String> rows = new ArrayList<>();
    for (Map<?, ?> panel : panels(dashboard)) {
      if ("row".equals(panel.get("type"))) {
        rows.add(title(panel));
      }
    }
    assertEquals(List.of("Senders", "Tenants", "Failures", "Queue", "Memory and JVM"), rows);
  }

  @Test
  void everyPanelQueryParsesAndTheTrafficTenantAndFailurePanelsShowTheRelaysUnderLoad() {
    int queries = 0;
    for (Map.Entry<String, List<String>> panel : queriesByPanel().entrySet()) {
      for (String query : panel.getValue()) {
        String json = prometheus.queryJson(query);
        assertTrue(json.contains("\"status\":\"success\""), panel.getKey() + ": " + json);
        queries++;
      }
    }
    assertTrue(queries > 30, "queries evaluated: " + queries);
    assertEquals(Map.of(), panelsWithoutData(ROWS_WITH_DATA));
  }

  @Test
  void theThrottledTenantShowsAmongTheFailuresAndTheFailingTenantsQueueDrops() {
    Set<String> failed = new TreeSet<>();
    for (Series s : prometheus.query(query("Failed series by tenant and kind", 0))) {
      failed.add(s.label("tenant") + " " + s.label("kind"));
    }
    assertTrue(failed.contains(THROTTLED + " throttled"), "failures: " + failed);
    Set<String> lanes = new TreeSet<>();
    for (Series s : prometheus.query(query("Lane states", 0))) {
      lanes.add(s.label("tenant"));
    }
    assertTrue(lanes.contains(THROTTLED), "lanes: " + lanes);
    Set<String> limited = new TreeSet<>();
    for (Series s : prometheus.query(query("Series limited by the relay's per-tenant limits", 0))) {
      limited.add(s.label("tenant") + " " + s.label("reason"));
    }
    assertEquals(Set.of(LIMITED + " max_series"), limited);
    assertTrue(queueDropped().contains(FAILING + " age"), "queue drops: " + queueDropped());
    List<Series> queued = prometheus.query(query("Queue bytes by tenant", 0));
    assertTrue(
        queued.stream().anyMatch(s -> FAILING.equals(s.label("tenant"))), "queue bytes: " + queued);
  }

  @Test
  void panelsQueryOnlyMetricsTheRelaysExport() throws Exception {
    Set<String> exported = new TreeSet<>();
    for (RelayFixture relay : List.of(sync, queue)) {
      for (String line : relay.get("/metrics").body().split("\n")) {
        if (!line.isEmpty() && !line.startsWith("#")) {
          exported.add(line.split("[{ ]", 2)[0]);
        }
      }
    }
    Map<String, Set<String>> unknown = new TreeMap<>();
    Pattern selector = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\{");
    for (Map.Entry<String, List<String>> panel : queriesByPanel().entrySet()) {
      for (String query : panel.getValue()) {
        Matcher m = selector.matcher(query);
        boolean any = false;
        while (m.find()) {
          any = true;
          String metric = m.group(1);
          if (!exported.contains(metric)) {
            unknown.computeIfAbsent(panel.getKey(), k -> new TreeSet<>()).add(metric);
          }
        }
        assertTrue(any, panel.getKey() + " selects a metric: " + query);
      }
    }
    assertEquals(Map.of(), unknown, "metrics the relays do not export; they export " + exported);
  }

  @Test
  void theVariableQueriesFindTheJobTheInstancesAndTheTenants() {
    Map<String, Set<String>> values = new TreeMap<>();
    Pattern labelValues = Pattern.compile("label_values\\((.*), *([a-z_]+)\\)");
    for (Object v : (List<?>) ((Map<?, ?>) dashboard().get("templating")).get("list")) {
      Map<?, ?> variable = (Map<?, ?>) v;
      if (!"query".equals(variable.get("type"))) {
        continue;
      }
      Matcher m = labelValues.matcher((String) variable.get("definition"));
      assertTrue(m.matches(), "label_values(selector, label): " + variable.get("definition"));
      Set<String> found = new TreeSet<>();
      for (Series s : prometheus.query(fill(m.group(1)))) {
        found.add(s.label(m.group(2)));
      }
      values.put((String) variable.get("name"), found);
    }
    assertEquals(Set.of("prw-relay"), values.get("job"));
    assertEquals(2, values.get("instance").size(), "both relays: " + values);
    for (int t = 0; t < TENANTS; t++) {
      assertTrue(values.get("tenant").contains("tenant-" + t), "tenants: " + values);
    }
  }

  /** Writes to both relays until the test ends: five tenants, a tenantless series, retries. */
  private static void send() {
    WriteRequestEncoder e = new WriteRequestEncoder();
    long seq = 0;
    while (sending) {
      seq++;
      try {
        byte[] body = request(e, seq);
        if (sync.write(body).statusCode() == 429) {
          // A retry of the same bytes: the ledger skips the tenants already delivered.
          sync.write(body);
        }
        queue.write(body);
        Thread.sleep(50);
      } catch (InterruptedException stop) {
        return;
      } catch (Exception e1) {
        if (sending) {
          throw new IllegalStateException("sending to the relays failed", e1);
        }
      }
    }
  }

  private static byte[] request(WriteRequestEncoder e, long seq) {
    e.reset();
    long now = System.currentTimeMillis();
    for (int n = 0; n < 20; n++) {
      for (int t = 0; t < TENANTS; t++) {
        e.beginSeries()
            .label("__name__", "dashboard_load")
            .label("n", Integer.toString(n))
            .label("seq", Long.toString(seq))
            .label("service_id", "tenant-" + t)
            .sample(n, now)
            .endSeries();
      }
    }
    e.beginSeries().label("__name__", "without_tenant").sample(1, now).endSeries();
    return e.toByteArray();
  }

  private static String scrapeConfig(URI syncRelay, URI queueRelay) {
    return """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        scrape_configs:
          - job_name: prw-relay
            static_configs:
              - targets: ['%s', '%s']
        """
        .formatted(syncRelay.getAuthority(), queueRelay.getAuthority());
  }

  /** The drops of the queue panel, as "tenant reason". */
  private static Set<String> queueDropped() {
    Set<String> drops = new TreeSet<>();
    for (Series s : prometheus.query(query("Queued, delivered and dropped", 2))) {
      drops.add(s.label("tenant") + " " + s.label("reason"));
    }
    return drops;
  }

  /** Queries of panels in {@code rows} that return no series, by panel title. */
  private static Map<String, List<String>> panelsWithoutData(Set<String> rows) {
    Map<String, List<String>> empty = new TreeMap<>();
    String row = null;
    for (Map<?, ?> panel : panels(dashboard())) {
      if ("row".equals(panel.get("type"))) {
        row = title(panel);
        continue;
      }
      if (!rows.contains(row)) {
        continue;
      }
      for (String query : expressions(panel)) {
        if (prometheus.query(query).isEmpty()) {
          empty.computeIfAbsent(title(panel), k -> new ArrayList<>()).add(query);
        }
      }
    }
    return empty;
  }

  /** Every panel's queries with the variables filled in, by panel title. */
  private static Map<String, List<String>> queriesByPanel() {
    Map<String, List<String>> m = new LinkedHashMap<>();
    for (Map<?, ?> panel : panels(dashboard())) {
      if (!"row".equals(panel.get("type"))) {
        m.put(title(panel), expressions(panel));
      }
    }
    return m;
  }

  /** Query {@code index} of the panel titled {@code title}, variables filled in. */
  private static String query(String title, int index) {
    List<String> queries = queriesByPanel().get(title);
    if (queries == null) {
      throw new IllegalArgumentException("no panel " + title);
    }
    return queries.get(index);
  }

  private static List<String> expressions(Map<?, ?> panel) {
    List<String> exprs = new ArrayList<>();
    for (Map<?, ?> target : targets(panel)) {
      exprs.add(fill((String) target.get("expr")));
    }
    return exprs;
  }

  private static String fill(String expr) {
    String filled = expr;
    // Longest names first, so that $__rate_interval is not taken for another variable.
    for (String name : new TreeSet<>(VARIABLES.keySet()).descendingSet()) {
      filled = filled.replace(name, VARIABLES.get(name));
    }
    if (filled.contains("$")) {
      throw new IllegalStateException("a variable the test does not fill in: " + expr);
    }
    return filled;
  }

  private static Map<?, ?> dashboard() {
    try {
      return (Map<?, ?>) MiniJson.parse(Files.readString(DASHBOARD));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static List<Map<?, ?>> panels(Map<?, ?> dashboard) {
    List<Map<?, ?>> panels = new ArrayList<>();
    for (Object p : (List<?>) dashboard.get("panels")) {
      panels.add((Map<?, ?>) p);
    }
    return panels;
  }

  private static List<Map<?, ?>> targets(Map<?, ?> panel) {
    List<Map<?, ?>> targets = new ArrayList<>();
    for (Object t : (List<?>) panel.get("targets")) {
      targets.add((Map<?, ?>) t);
    }
    return targets;
  }

  private static String title(Map<?, ?> panel) {
    return (String) panel.get("title");
  }
}
