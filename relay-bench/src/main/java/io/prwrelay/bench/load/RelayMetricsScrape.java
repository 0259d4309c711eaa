package io.prwrelay.bench.load;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A few of the relay's own counters, read from its {@code /metrics} page at the end of a run, that
 * show what the lanes did: downstream requests, coalesced fragments, series the ledger kept from
 * being sent twice, and queued bytes left. Each value is summed over its label sets; a metric the
 * relay does not have (an older build) is left out.
 */
final class RelayMetricsScrape {
  /** The metrics read, in the order they are reported. */
  static final List<String> NAMES =
      List.of(
          "relay_tenant_downstream_requests_total",
          "relay_tenant_coalesced_fragments_total",
          "relay_ledger_skipped_series_total",
          "relay_tenant_series_failed_total",
          "relay_queue_bytes");

  private RelayMetricsScrape() {}

  /**
   * Reads the metrics of the relay whose write URL is {@code writeUrl}; empty when the page cannot
   * be read.
   */
  static Map<String, Double> read(URI writeUrl) throws InterruptedException {
    URI metrics = writeUrl.resolve("/metrics");
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest request = HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(5)).build();
    try {
      HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200 ? parse(response.body()) : Map.of();
    } catch (IOException e) {
      return Map.of();
    }
  }

  /** Sums {@link #NAMES} in a Prometheus text page. */
  static Map<String, Double> parse(String page) {
    Map<String, Double> sums = new LinkedHashMap<>();
    for (String line : page.split("\n")) {
      if (line.startsWith("#") || line.isBlank()) {
        continue;
      }
      int nameEnd = 0;
      while (nameEnd < line.length()
          && line.charAt(nameEnd) != '{'
          && line.charAt(nameEnd) != ' ') {
        nameEnd++;
      }
      String name = line.substring(0, nameEnd);
      if (!NAMES.contains(name)) {
        continue;
      }
      String[] parts = line.trim().split("\\s+");
      try {
        sums.merge(name, Double.parseDouble(parts[parts.length - 1]), Double::sum);
      } catch (NumberFormatException e) {
        // Not a sample line after all; nothing to add.
      }
    }
    Map<String, Double> ordered = new LinkedHashMap<>();
    NAMES.stream().filter(sums::containsKey).forEach(n -> ordered.put(n, sums.get(n)));
    return ordered;
  }
}
