package io.prwrelay.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RelayMetricsScrapeTest {
  @Test
  void sumsEachMetricOverItsLabelsInReportOrder() {
    String page =
        String.join(
            "\n",
            "# HELP relay_ledger_skipped_series_total series not sent again",
            "# TYPE relay_ledger_skipped_series_total counter",
            "relay_ledger_skipped_series_total 1234.0",
            "relay_tenant_downstream_requests_total{tenant=\"a\"} 10.0",
            "relay_tenant_downstream_requests_total{tenant=\"b\"} 5.0",
            "relay_tenant_downstream_requests_total_other 99.0",
            "relay_requests_total{status=\"204\"} 7.0",
            "");
    Map<String, Double> m = RelayMetricsScrape.parse(page);
    assertEquals(
        List.of("relay_tenant_downstream_requests_total", "relay_ledger_skipped_series_total"),
        List.copyOf(m.keySet()));
    assertEquals(15.0, m.get("relay_tenant_downstream_requests_total"));
    assertEquals(1234.0, m.get("relay_ledger_skipped_series_total"));
  }

  @Test
  void batchesDeliveredAreSummedApartForEachPath() {
    String page =
        String.join(
            "\n",
            "relay_tenant_batches_delivered_total{path=\"direct\",tenant=\"a\"} 7.0",
            "relay_tenant_batches_delivered_total{path=\"queue\",tenant=\"a\"} 2.0",
            "relay_tenant_batches_delivered_total{path=\"direct\",tenant=\"b\"} 3.0",
            "relay_queue_bytes 0.0",
            "");
    Map<String, Double> m = RelayMetricsScrape.parse(page);
    assertEquals(
        List.of(
            "relay_tenant_batches_delivered_total{path=\"direct\"}",
            "relay_tenant_batches_delivered_total{path=\"queue\"}",
            "relay_queue_bytes"),
        List.copyOf(m.keySet()));
    assertEquals(10.0, m.get("relay_tenant_batches_delivered_total{path=\"direct\"}"));
    assertEquals(2.0, m.get("relay_tenant_batches_delivered_total{path=\"queue\"}"));
  }

  @Test
  void aRelayWithoutTheseMetricsGivesNothing() {
    assertEquals(Map.of(), RelayMetricsScrape.parse("relay_requests_total{status=\"204\"} 7.0\n"));
  }
}
