package io.prwrelay.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.prwrelay.server.queue.DropReason;
import io.prwrelay.server.queue.FileTenantQueue;
import io.prwrelay.server.queue.QueueListener;
import io.prwrelay.server.queue.QueueStore;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The metrics of the on-disk queues of queue mode: their sizes and ages, all tenants together and
 * per tenant (read from the {@link QueueStore} when scraped), and what the store threw away. Told
 * by the store as its {@link QueueListener}, on its I/O thread. In sync mode there is no store and
 * the per-tenant gauges read 0.
 */
public final class QueueMetrics implements QueueListener {
  private final MeterRegistry registry;
  private final TenantAdmission<TenantMeters> tenants;
  private final Counter tailCutBytes;
  private volatile QueueStore store;

  QueueMetrics(MeterRegistry registry, TenantAdmission<TenantMeters> tenants) {
    this.registry = registry;
    this.tenants = tenants;
    tailCutBytes = MetricCatalogue.QUEUE_TAIL_CUT_BYTES.counter(registry);
  }

  /** The on-disk queues, whose sizes the {@code relay_queue_*} gauges report from now on. */
  void queues(QueueStore store) {
    this.store = store;
    MetricCatalogue.QUEUE_BYTES.gauge(registry, store, QueueStore::bytes);
    MetricCatalogue.QUEUE_DISK.gauge(registry, store, QueueStore::diskBytes);
    MetricCatalogue.QUEUE_RECORDS.gauge(registry, store, QueueStore::records);
    MetricCatalogue.QUEUE_OLDEST_AGE.gauge(
        registry, store, q -> ageSeconds(q.oldestAppendMillis().orElse(Long.MIN_VALUE)));
  }

  /** The per-tenant queue gauges: bytes, bytes on disk, age of the oldest record. */
  List<TenantMeters.TenantGauge> tenantGauges() {
    return List.of(
        perTenant(MetricCatalogue.TENANT_QUEUE_BYTES, FileTenantQueue::bytes),
        perTenant(MetricCatalogue.TENANT_QUEUE_DISK, FileTenantQueue::diskBytes),
        perTenant(
            MetricCatalogue.TENANT_QUEUE_OLDEST_AGE,
            q -> ageSeconds(q.oldestAppendMillis().orElse(Long.MIN_VALUE))));
  }

  @Override
  public void dropped(String tenant, DropReason reason, long records, long series, long bytes) {
    tenants.meters(tenant).dropped(reason.label()).increment(series);
  }

  @Override
  public void tailCut(String tenant, Path segment, long bytes) {
    tailCutBytes.increment(bytes);
  }

  /** The gauge {@code metric} of a tenant's queue: 0 without a store or a queue of the tenant. */
  private TenantMeters.TenantGauge perTenant(
      Metric metric, ToDoubleFunction<FileTenantQueue> value) {
    return new TenantMeters.TenantGauge(
        metric,
        tenant -> {
          QueueStore s = store;
          FileTenantQueue q = s == null ? null : s.find(tenant);
          return q == null ? 0 : value.applyAsDouble(q);
        });
  }

  private static double ageSeconds(long appendMillis) {
    return appendMillis == Long.MIN_VALUE
        ? 0
        : Math.max(0, System.currentTimeMillis() - appendMillis) / 1000.0;
  }
}
