package io.prwrelay.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prwrelay.server.testing.RelayFixture;
import io.prwrelay.testing.RawProto;
import io.prwrelay.testkit.ScriptedDownstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The catalogue of metrics against what uses it: what a registry exports when built from it, a real
 * relay's scrape, the metrics table of docs/metrics.md, the example alert rules and the Grafana
 * dashboard.
 */
class MetricCatalogueTest {
  private static final Path ROOT = Path.of("..");
  private static final Pattern TYPE = Pattern.compile("# TYPE (\\S+) (\\S+)");
  private static final Pattern HELP = Pattern.compile("# HELP (\\S+) (.*)");
  private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*})?");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");

  @Test
  void everyMetricExportsTheFamiliesItsNameSaysWithItsHelp() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    registry.config().meterFilter(RuntimeMetrics.PROMETHEUS_NAMES);
    Map<String, String> expected = new TreeMap<>();
    for (Metric m : MetricCatalogue.ALL) {
      String[] tags = m.tags().stream().map(t -> "x").toArray(String[]::new);
      switch (m.type()) {
        case COUNTER -> m.counter(registry, tags).increment();
        case GAUGE -> m.gauge(registry, 1, Integer::doubleValue, tags);
        case HISTOGRAM -> m.timer(registry, tags);
      }
      for (String family : m.exportedFamilies()) {
        expected.put(family, m.help());
      }
    }
    Map<String, String> exported = new TreeMap<>();
    for (String line : registry.scrape().split("\n")) {
      Matcher help = HELP.matcher(line);
      if (help.matches()) {
        exported.put(help.group(1), help.group(2));
      }
    }
    assertEquals(expected, exported);
    assertEquals(MetricCatalogue.ALL.size(), new HashSet<>(MetricCatalogue.ALL).size());
  }

  @Test
  void aMetricRefusesTagValuesThatDoNotMatchItsTags() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> MetricCatalogue.HTTP_REQUESTS.counter(registry, "metrics"));
    assertEquals(
        "relay.http.requests has the tags [endpoint, status], given the values [metrics]",
        e.getMessage());
  }

  /**
   * A relay in queue mode whose downstream refuses one tenant, after writes with and without a
   * tenant and requests to the other endpoints, exports only metrics of the catalogue, each with
   * exactly its tags.
   */
  @Test
  void aRelayAfterTrafficExportsOnlyCatalogueMetricsWithTheirTags(@TempDir Path queueDir)
      throws Exception {
    Map<String, String> config =
        Map.of("relay.delivery.mode", "queue", "relay.delivery.queue.dir", queueDir.toString());
    String scrape;
    try (RelayFixture f =
        new RelayFixture(
            config, d -> d.rule("failing", () -> ScriptedDownstream.Reply.status(503)))) {
      byte[] request =
          RawProto.cat(
              RawProto.series(RawProto.label("service_id", "a"), RawProto.sample(1, 1)),
              RawProto.series(RawProto.label("service_id", "failing"), RawProto.sample(1, 1)),
              RawProto.series(RawProto.label("other", "x"), RawProto.sample(1, 1)));
      assertEquals(204, f.write(request).statusCode());
      assertEquals(400, f.write(new byte[] {0x0a, 0x7f, 0x01}).statusCode());
      assertEquals(200, f.get("/-/ready").statusCode());
      scrape = f.get("/metrics").body();
    }
    Map<String, Metric> families = new TreeMap<>();
    List<String> problems = new ArrayList<>();
    for (String line : scrape.split("\n")) {
      Matcher type = TYPE.matcher(line);
      if (type.matches() && type.group(1).startsWith("relay_")) {
        Metric m = CatalogueUses.metricOf(type.group(1));
        if (m == null) {
          problems.add(type.group(1) + " is not in the catalogue");
        } else {
          families.put(type.group(1), m);
        }
      }
      Matcher sample = SAMPLE.matcher(line);
      if (!line.startsWith("relay_") || !sample.lookingAt()) {
        continue;
      }
      Metric m = CatalogueUses.metricOf(sample.group(1));
      Set<String> labels = new TreeSet<>();
      Matcher label = LABEL.matcher(sample.group(2) == null ? "" : sample.group(2));
      while (label.find()) {
        labels.add(label.group(1));
      }
      labels.remove("le");
      if (m != null && !labels.equals(new TreeSet<>(m.tags()))) {
        problems.add(line + " has the labels " + labels + ", the catalogue says " + m.tags());
      }
    }
    assertEquals(List.of(), problems);
    assertTrue(families.size() > 40, "families exported: " + families.keySet());
    for (String perTenant :
        List.of(
            "relay_tenant_queue_bytes{tenant=\"failing\"}",
            "relay_tenant_lane_state{tenant=\"failing\"}",
            "relay_series_defaulted_total{reason=\"missing\"}",
            "relay_series_rejected_total{reason=\"malformed\"}")) {
      assertTrue(scrape.contains(perTenant), perTenant + " in\n" + scrape);
    }
  }

  /**
   * Each metric has a row in the metrics table of docs/metrics.md naming it and its tags, and the
   * table names no metric the catalogue lacks.
   */
  @Test
  void theMetricsDocTableDocumentsEveryMetricWithItsTags() throws Exception {
    Map<String, List<Set<String>>> rows = new HashMap<>();
    Pattern name = Pattern.compile("`(relay_[a-z_]+)(\\{[^`]*})?`");
    Pattern tag = Pattern.compile("`([a-z_]+)`");
    for (String line : Files.readAllLines(ROOT.resolve("docs/metrics.md"))) {
      if (!line.startsWith("| `relay_")) {
        continue;
      }
      String[] cells = line.split("\\|");
      Set<String> tags = new TreeSet<>();
      for (Matcher t = tag.matcher(cells[2]); t.find(); ) {
        tags.add(t.group(1));
      }
      for (Matcher n = name.matcher(cells[1]); n.find(); ) {
        rows.computeIfAbsent(n.group(1), k -> new ArrayList<>()).add(tags);
      }
    }
    List<String> problems = new ArrayList<>();
    Set<String> catalogued = new TreeSet<>();
    for (Metric m : MetricCatalogue.ALL) {
      catalogued.add(m.exportedName());
      List<Set<String>> documented = rows.getOrDefault(m.exportedName(), List.of());
      if (documented.isEmpty()) {
        problems.add(m.exportedName() + " has no row in the metrics table of docs/metrics.md");
      }
      for (Set<String> tags : documented) {
        if (!tags.equals(new TreeSet<>(m.tags()))) {
          problems.add(m.exportedName() + " documented with " + tags + ", tags " + m.tags());
        }
      }
    }
    for (String documented : rows.keySet()) {
      if (!catalogued.contains(documented)) {
        problems.add(
            documented + " is in the metrics table of docs/metrics.md but not in the catalogue");
      }
    }
    Collections.sort(problems);
    assertEquals(List.of(), problems);
  }

  @Test
  void theAlertRulesUseOnlyCatalogueMetricsAndTheirTags() throws Exception {
    CatalogueUses uses =
        new CatalogueUses()
            .check("docker/alerts.yml", Files.readString(ROOT.resolve("docker/alerts.yml")))
            .check(
                "docker/alerts.test.yml", Files.readString(ROOT.resolve("docker/alerts.test.yml")));
    assertEquals(List.of(), uses.problems());
    assertTrue(uses.uses() > 15, "relay metrics used: " + uses.uses());
  }

  @Test
  void theDashboardUsesOnlyCatalogueMetricsAndTheirTags() throws Exception {
    Path dashboard = ROOT.resolve("docker/grafana/prw-relay-dashboard.json");
    CatalogueUses uses =
        new CatalogueUses().check(dashboard.toString(), Files.readString(dashboard));
    assertEquals(List.of(), uses.problems());
    assertTrue(uses.uses() > 60, "relay metrics used: " + uses.uses());
  }

  /** The check finds what it is for: an unknown name, and labels a metric does not have. */
  @Test
  void theCheckNamesUnknownMetricsAndLabelsTheMetricLacks() {
    CatalogueUses uses =
        new CatalogueUses()
            .check(
                "rule",
                "sum by (instance, kind) (rate(relay_requests_total{kind!=\\\"throttled\\\"}[5m]))"
                    + " + relay_tenant_series_failled_total"
                    + " + histogram_quantile(0.9, sum by (le)"
                    + " (rate(relay_request_duration_seconds_bucket[1m])))"
                    + " + label_values(relay_lanes, tenant)");
    assertEquals(
        List.of(
            "rule: relay_requests_total is used with the label kind, but its tags are [status]",
            "rule: relay_tenant_series_failled_total is not in the catalogue",
            "rule: relay_requests_total is used with the label kind, but its tags are [status]",
            "rule: relay_lanes is used with the label tenant, but its tags are []"),
        uses.problems());
  }
}
