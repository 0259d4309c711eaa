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
 * being sent twice, tenant batches delivered directly and through the queue, and queued bytes left.
 * Each value is summed over its label sets ({@link #BY_PATH} apart for each {@code path}); a metric
 * the relay does not have (an older build) is left out.
 */
final class RelayMetricsScrape {
  /** The metrics read, in the order they are reported. */
  static final List<String> NAMES =
      List.of(
          "relay_tenant_downstream_requests_total",
          "relay_tenant_coalesced_fragments_total",
          "relay_ledger_skipped_series_total",
          "relay_tenant_series_failed_total",
          "relay_tenant_batches_delivered_total",
          "relay_queue_bytes");

  /** Summed apart for each value of its {@code path} label, as {@code name{path="direct"}}. */
  static final String BY_PATH = "relay_tenant_batches_delivered_total";

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
      String key = name.equals(BY_PATH) ? name + "{path=\"" + label(line, "path") + "\"}" : name;
      String[] parts = line.trim().split("\\s+");
      try {
        sums.merge(key, Double.parseDouble(parts[parts.length - 1]), Double::sum);
      } catch (NumberFormatException e) {
        // Not a sample line after all; nothing to add.
      }
    }
    Map<String, Double> ordered = new LinkedHashMap<>();
    for (String n : NAMES) {
      sums.entrySet().stream()
          .filter(e -> e.getKey().equals(n) || e.getKey().startsWith(n + "{"))
          .sorted(Map.Entry.comparingByKey())
          .forEach(e -> ordered.put(e.getKey(), e.getValue()));
    }
    return ordered;
  }

  /** The value of label {@code name} in a sample line, or empty when it has none. */
  private static String label(String line, String name) {
    String start = name + "=\"";
    int at = line.indexOf(start);
    if (at < 0) {
      return "";
    }
    int from = at + start.length();
    int end = line.indexOf('"', from);
    return end < 0 ? "" : line.substring(from, end);
  }
}
