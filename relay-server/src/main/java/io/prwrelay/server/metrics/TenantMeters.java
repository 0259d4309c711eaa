package io.prwrelay.server.metrics;

import static io.prwrelay.server.metrics.MetricCatalogue.TENANT_BATCHES_DELIVERED;
import static io.prwrelay.server.metrics.MetricCatalogue.TENANT_LANE_BACKOFFS;
import static io.prwrelay.server.metrics.MetricCatalogue.TENANT_SERIES_DROPPED;
import static io.prwrelay.server.metrics.MetricCatalogue.TENANT_SERIES_FAILED;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.ToDoubleFunction;

/**
 * The meters of one tenant label: a tenant {@link TenantAdmission} admitted, or {@code other} for
 * all the rest. The ingress, the lanes and the queue count into the same object; {@link #remove}
 * takes every meter of the label off the registry when the tenant falls out of the top.
 */
final class TenantMeters {
  /**
   * A per-tenant gauge read when scraped, registered for each admitted tenant (not for {@code
   * other}): its catalogue entry and how to read it for a tenant.
   */
  record TenantGauge(Metric metric, ToDoubleFunction<String> value) {}

  private final String tenant;
  private final MeterRegistry registry;
  // Concurrent: two loops may register a tagged counter of the same tenant at once.
  private final Queue<Meter> all = new ConcurrentLinkedQueue<>();
  private final Map<String, Counter> byTag = new ConcurrentHashMap<>();
  final Counter seriesIn;
  final Counter metadataIn;
  final Counter samplesIn;
  final Counter bytesIn;
  final Counter seriesOut;
  final Counter samplesOut;
  final Counter bytesOut;
  final Counter seriesQueued;
  final Counter batchesDirect;
  final Counter batchesFromQueue;
  final Counter downstreamRequests;
  final Counter coalesced;
  final Counter splitSends;

  TenantMeters(String tenant, MeterRegistry registry, List<TenantGauge> gauges) {
    this.tenant = tenant;
    this.registry = registry;
    seriesIn = counter(MetricCatalogue.TENANT_SERIES_IN);
    metadataIn = counter(MetricCatalogue.TENANT_METADATA_IN);
    samplesIn = counter(MetricCatalogue.TENANT_SAMPLES_IN);
    bytesIn = counter(MetricCatalogue.TENANT_BYTES_IN);
    seriesOut = counter(MetricCatalogue.TENANT_SERIES_OUT);
    samplesOut = counter(MetricCatalogue.TENANT_SAMPLES_OUT);
    bytesOut = counter(MetricCatalogue.TENANT_BYTES_OUT);
    seriesQueued = counter(MetricCatalogue.TENANT_SERIES_QUEUED);
    batchesDirect = tagged(TENANT_BATCHES_DELIVERED, "direct");
    batchesFromQueue = tagged(TENANT_BATCHES_DELIVERED, "queue");
    downstreamRequests = counter(MetricCatalogue.TENANT_DOWNSTREAM_REQUESTS);
    coalesced = counter(MetricCatalogue.TENANT_COALESCED_FRAGMENTS);
    splitSends = counter(MetricCatalogue.TENANT_SPLIT_SENDS);
    for (TenantGauge g : gauges) {
      all.add(g.metric().gauge(registry, g.value(), v -> v.applyAsDouble(tenant), tenant));
    }
  }

  /**
   * Series whose batch ended with {@code kind}: throttled, unavailable, rejected; throttled also
   * counts queued series a 429 kept queued.
   */
  Counter failed(String kind) {
    return tagged(TENANT_SERIES_FAILED, kind);
  }

  /** Series dropped from the tenant's queue, or throttled and answered 400, by reason. */
  Counter dropped(String reason) {
    return tagged(TENANT_SERIES_DROPPED, reason);
  }

  /** Series the relay's own limits kept from the downstream, by reason. */
  Counter limited(String reason) {
    return tagged(MetricCatalogue.TENANT_SERIES_LIMITED, reason);
  }

  /** Series refused a place in the tenant's queue, by the bound reached. */
  Counter refused(String bound) {
    return tagged(MetricCatalogue.TENANT_SERIES_REFUSED, bound);
  }

  /** Times the tenant's lane started backing off or being throttled ({@code state}). */
  Counter backoffs(String state) {
    return tagged(TENANT_LANE_BACKOFFS, state);
  }

  /** Unregisters every meter of this label. */
  void remove() {
    for (Meter m : all) {
      registry.remove(m);
    }
  }

  /** The tenant's counter {@code metric} with one more tag, registered on first use. */
  private Counter tagged(Metric metric, String value) {
    return byTag.computeIfAbsent(
        metric.name() + " " + value, x -> register(metric.counter(registry, tenant, value)));
  }

  private Counter counter(Metric metric) {
    return register(metric.counter(registry, tenant));
  }

  private Counter register(Counter c) {
    all.add(c);
    return c;
  }
}
