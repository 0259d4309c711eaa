package io.prwrelay.server.metrics;

import static io.prwrelay.server.metrics.MetricCatalogue.SERIES_DEFAULTED;
import static io.prwrelay.server.metrics.MetricCatalogue.SERIES_DROPPED;
import static io.prwrelay.server.metrics.MetricCatalogue.TLS_HANDSHAKE_FAILURES;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.util.concurrent.Ticker;
import io.prwrelay.core.route.MetadataDrop;
import io.prwrelay.core.route.MetadataRoute;
import io.prwrelay.core.route.MetricFamilies;
import io.prwrelay.core.route.RouteResult;
import io.prwrelay.core.route.TenantProblem;
import io.prwrelay.server.config.RetainedMemory;
import io.prwrelay.server.downstream.DownstreamProtocol;
import io.prwrelay.server.lane.LaneObserver;
import io.prwrelay.server.lane.NewLaneBudget;
import io.prwrelay.server.limits.TenantLimits;
import io.prwrelay.server.queue.QueueListener;
import io.prwrelay.server.queue.QueueStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;

/**
 * The relay's metrics, all named {@code relay_*} and declared in {@link MetricCatalogue}, served by
 * {@code GET /metrics} in the Prometheus text format. This class owns the one registry and counts
 * what the ingress sees (requests, connections, routing); the lanes report through {@link
 * #laneObserver()} ({@link LaneMetrics}), the queue through {@link #queueListener()} ({@link
 * QueueMetrics}).
 *
 * <p>Per-tenant series carry a {@code tenant} label bounded by {@code relay.metrics.max-tenants}:
 * once per ranking interval (a minute) the tenants are ranked by the series routed to them during
 * the last interval, and only the top that many keep their own series; a tenant that falls out of
 * the top loses its series. Until the first ranking, the first tenants seen are admitted. Every
 * other tenant is counted under {@code tenant="other"} ({@link TenantAdmission}), so a tenant
 * cardinality explosion cannot become a metrics cardinality explosion.
 */
public final class RelayMetrics {
  /** Tag value for tenants beyond {@code relay.metrics.max-tenants}. */
  public static final String OTHER_TENANT = TenantAdmission.OTHER;

  /** How often the admitted tenants are re-ranked by volume. */
  public static final Duration DEFAULT_RERANK_INTERVAL = Duration.ofMinutes(1);

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

  private final TenantAdmission<TenantMeters> tenants;
  private final LaneMetrics lanes;
  private final QueueMetrics queues;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final Counter ledgerSkipped;
  private final Counter receivedBytes;
  private final Counter withoutTenantLabel;

  /**
   * {@code relay_requests_total} by the status answered, looked up once per status: a builder, a
   * tag string and a registry lookup per answer showed in the allocation profile.
   */
  private final AtomicReferenceArray<Counter> answered = new AtomicReferenceArray<>(1000);

  private final Timer requestDuration;
  private final Counter forwardedWhole;
  private volatile ToDoubleFunction<String> activeSeries;
  private volatile ToDoubleFunction<String> newSeries;
  private final InsightMetrics insight;
  private final TenantLabelWatch tenantLabels = new TenantLabelWatch();

  public RelayMetrics(int maxTenants, ByteBufAllocator allocator) {
    this(maxTenants, allocator, Ticker.systemTicker());
  }

  /** Metrics whose ranking of tenants runs on {@code ticker}'s time. */
  RelayMetrics(int maxTenants, ByteBufAllocator allocator, Ticker ticker) {
    registry.config().meterFilter(RuntimeMetrics.PROMETHEUS_NAMES);
    tenants =
        new TenantAdmission<>(
            maxTenants, DEFAULT_RERANK_INTERVAL, ticker, this::newMeters, TenantMeters::remove);
    lanes = new LaneMetrics(registry, tenants);
    queues = new QueueMetrics(registry, tenants);
    insight = new InsightMetrics(registry);
    MetricCatalogue.INFLIGHT_REQUESTS.gauge(registry, inFlight, AtomicInteger::get);
    requestDuration = MetricCatalogue.REQUEST_DURATION.timer(registry);
    forwardedWhole = MetricCatalogue.REQUESTS_FORWARDED_WHOLE.counter(registry);
    if (allocator instanceof ByteBufAllocatorMetricProvider provider) {
      ByteBufAllocatorMetric m = provider.metric();
      MetricCatalogue.POOLED_MEMORY.gauge(
          registry, m, ByteBufAllocatorMetric::usedDirectMemory, "direct");
      MetricCatalogue.POOLED_MEMORY.gauge(
          registry, m, ByteBufAllocatorMetric::usedHeapMemory, "heap");
    }
    receivedBytes = MetricCatalogue.RECEIVED_BYTES.counter(registry);
    ledgerSkipped = MetricCatalogue.LEDGER_SKIPPED.counter(registry);
    withoutTenantLabel = MetricCatalogue.SERIES_WITHOUT_TENANT_LABEL.counter(registry);
  }

  /** What the lanes tell the metrics: downstream attempts, batch outcomes, lane health. */
  public LaneObserver laneObserver() {
    return lanes;
  }

  /** What the queue store tells the metrics: records dropped, files cut. */
  public QueueListener queueListener() {
    return queues;
  }

  /**
   * Registers {@code relay_downstream_protocol{protocol}} (1 for the Remote Write version PRW 2.0
   * input is sent in now, 0 for the other) and {@code relay_downstream_protocol_fallbacks_total}
   * (PRW 2.0 requests answered 415 and re-sent as 1.0 in auto mode).
   */
  public void downstreamProtocol(DownstreamProtocol protocol) {
    lanes.downstreamProtocol(protocol);
  }

  /** Registry for tests and for serving. */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** The Prometheus text exposition of every metric. */
  public String scrape() {
    insight.refresh(tenants.labelledTenants());
    return registry.scrape();
  }

  /**
   * The exposition of only the per-tenant series of the tenants {@code visible} accepts ({@link
   * TenantScrape}): what a reader limited to some tenants may see.
   */
  public String scrape(Predicate<String> visible) {
    insight.refresh(tenants.labelledTenants());
    return TenantScrape.of(registry.getPrometheusRegistry(), visible);
  }

  /** Sender write requests started and not yet answered. */
  public int inFlight() {
    return inFlight.get();
  }

  public void requestStarted() {
    inFlight.incrementAndGet();
  }

  /** A sender request was answered with {@code status} after {@code nanos} since its first byte. */
  public void requestFinished(int status, long nanos) {
    inFlight.decrementAndGet();
    int slot = status >= 0 && status < 1000 ? status : 0;
    Counter c = answered.get(slot);
    if (c == null) {
      c = MetricCatalogue.REQUESTS.counter(registry, Integer.toString(status));
      answered.set(slot, c);
    }
    c.increment();
    requestDuration.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** Answer to a non-write endpoint (no in-flight accounting). */
  public void otherRequest(String endpoint, int status) {
    MetricCatalogue.HTTP_REQUESTS.counter(registry, endpoint, Integer.toString(status)).increment();
  }

  public void received(int compressedBytes) {
    receivedBytes.increment(compressedBytes);
  }

  /**
   * What {@link #routed} counted of series without any tenant label, for the warning when most
   * series carry none.
   */
  public TenantLabelWatch tenantLabels() {
    return tenantLabels;
  }

  // The enums' values, copied once: values() copies its array on every call.
  private static final TenantProblem[] PROBLEMS = TenantProblem.values();
  private static final MetadataRoute[] METADATA_ROUTES = MetadataRoute.values();
  private static final MetadataDrop[] METADATA_DROPS = MetadataDrop.values();

  /** Counts what routing found: series without a valid tenant, by reason and fate. */
  public void routed(RouteResult result) {
    int unlabelled =
        result.defaulted(TenantProblem.MISSING) + result.dropped(TenantProblem.MISSING);
    tenantLabels.routed(result.seriesIn(), unlabelled);
    if (unlabelled > 0) {
      withoutTenantLabel.increment(unlabelled);
    }
    for (TenantProblem p : PROBLEMS) {
      int dropped = result.dropped(p);
      if (dropped > 0) {
        SERIES_DROPPED.counter(registry, p.tag()).increment(dropped);
      }
      int defaulted = result.defaulted(p);
      if (defaulted > 0) {
        SERIES_DEFAULTED.counter(registry, p.tag()).increment(defaulted);
      }
    }
    for (MetadataRoute how : METADATA_ROUTES) {
      int n = result.metadataRouted(how);
      if (n > 0) {
        MetricCatalogue.METADATA_ROUTED.counter(registry, how.tag()).increment(n);
      }
    }
    for (MetadataDrop reason : METADATA_DROPS) {
      int n = result.metadataDropped(reason);
      if (n > 0) {
        metadataDropped(reason.tag(), n);
      }
    }
  }

  /**
   * PRW 1.0 metadata entries not sent, by reason: a {@link MetadataDrop} tag, or {@code
   * forbidden_tenant} for copies routed by family to a tenant the request's credentials may not
   * write.
   */
  public void metadataDropped(String reason, int entries) {
    if (entries > 0) {
      MetricCatalogue.METADATA_DROPPED.counter(registry, reason).increment(entries);
    }
  }

  /**
   * Registers {@code relay_metadata_family_tenants}: the family–tenant associations held to route
   * metadata-only requests.
   */
  public void metricFamilies(MetricFamilies families) {
    MetricCatalogue.METADATA_FAMILY_TENANTS.gauge(registry, families, MetricFamilies::size);
  }

  /** {@code entries} PRW 1.0 metadata entries go to {@code tenant} in one batch. */
  public void tenantMetadataIn(String tenant, int entries) {
    if (entries > 0) {
      tenants.meters(tenant).metadataIn.increment(entries);
    }
  }

  /**
   * A request was its own tenant batch and its compressed body was handed to the lane as received
   * (no re-encode, no re-compress).
   */
  public void forwardedWhole() {
    forwardedWhole.increment();
  }

  /**
   * A request failed inside the relay: {@code exception} or {@code memory} while processing a write
   * request, {@code connection} for an error that ended a connection.
   */
  public void internalError(String kind) {
    MetricCatalogue.INTERNAL_ERRORS.counter(registry, kind).increment();
  }

  /**
   * Registers the request memory budget: {@code relay_inflight_body_bytes} (admitted now) and
   * {@code relay_inflight_body_limit_bytes}.
   */
  public void inflightBudget(LongSupplier inUse, long limit) {
    MetricCatalogue.INFLIGHT_BODY.gauge(registry, inUse, LongSupplier::getAsLong);
    MetricCatalogue.INFLIGHT_BODY_LIMIT.gauge(registry, limit, Long::doubleValue);
  }

  /**
   * A write request was refused by the memory budget: {@code total} or {@code client} (503), or
   * {@code too_large} (413).
   */
  public void inflightRejected(String reason) {
    MetricCatalogue.INFLIGHT_REJECTED.counter(registry, reason).increment();
  }

  /**
   * Registers {@code relay_memory_retained_bound_bytes}: each long-lived structure's worst case in
   * effect.
   */
  public void retainedBounds(List<RetainedMemory.Bound> bounds) {
    for (RetainedMemory.Bound b : bounds) {
      MetricCatalogue.MEMORY_RETAINED_BOUND.gauge(
          registry, b.bytes(), Long::doubleValue, b.structure());
    }
  }

  /** Registers {@code relay_connections} (open ingress connections) and its limit. */
  public void connections(IntSupplier open, int limit) {
    MetricCatalogue.CONNECTIONS.gauge(registry, open, IntSupplier::getAsInt);
    MetricCatalogue.CONNECTIONS_LIMIT.gauge(registry, limit, Integer::doubleValue);
  }

  /**
   * A connection beyond {@code relay.server.max-connections}: {@code answered} 503, or {@code
   * closed} at once; or a connection closed because it did not read its answers ({@code
   * not_reading}) or sent nothing within the read timeout ({@code silent}).
   */
  public void connectionRejected(String how) {
    MetricCatalogue.CONNECTIONS_REJECTED.counter(registry, how).increment();
  }

  /** A request refused by inbound auth: 401 (credentials) or 403 (a tenant not allowed). */
  public void authRejected(int status) {
    MetricCatalogue.AUTH_REJECTED.counter(registry, Integer.toString(status)).increment();
  }

  /**
   * Series of {@code tenant} its limits kept from the downstream: {@code max_series} (dropped at
   * the route step) or {@code samples_rate} (a batch answered as a 429).
   */
  public void tenantLimited(String tenant, String reason, int series) {
    tenants.meters(tenant).limited(reason).increment(series);
  }

  /**
   * Registers what the per-tenant limits report: whether the overrides file's last look succeeded,
   * their memory, and what their memory bound refused.
   */
  public void limits(TenantLimits limits) {
    MetricCatalogue.LIMITS_CONFIG_LAST_RELOAD_SUCCESSFUL.gauge(
        registry, limits, l -> l.lastReloadSuccessful() ? 1 : 0);
    MetricCatalogue.LIMITS_MEMORY.gauge(registry, limits, TenantLimits::memoryBytes);
    MetricCatalogue.LIMITS_MEMORY_REFUSED.counter(registry, limits, TenantLimits::memoryRefused);
  }

  /**
   * A watched file ({@code tls}, {@code bearer-token-file}, {@code limits-overrides}) changed and
   * was re-read or not.
   */
  public void reloaded(String file, boolean success) {
    MetricCatalogue.RELOADS.counter(registry, file, success ? "success" : "failure").increment();
  }

  /** A TLS handshake on the ingress failed. */
  public void tlsHandshakeFailed() {
    TLS_HANDSHAKE_FAILURES.counter(registry, "handshake").increment();
  }

  /** A connection to the TLS ingress spoke plain text. */
  public void tlsPlaintextRejected() {
    TLS_HANDSHAKE_FAILURES.counter(registry, "plaintext").increment();
  }

  /** Series of a request that was rejected as a whole (400), by reason. */
  public void rejectedSeries(String reason, int series) {
    if (reason.equals("no_tenant")) {
      // relay.tenant.missing=reject: the request's series count as carrying no tenant label.
      tenantLabels.routed(series, series);
    }
    MetricCatalogue.SERIES_REJECTED.counter(registry, reason).increment(series);
  }

  /** A tenant batch of {@code bytes} uncompressed bytes was formed and goes to its lane. */
  public void tenantIn(String tenant, int series, long samples, int bytes) {
    tenants.routed(tenant, series);
    TenantMeters m = tenants.meters(tenant);
    m.seriesIn.increment(series);
    m.samplesIn.increment(samples);
    m.bytesIn.increment(bytes);
  }

  /**
   * A throttled tenant's batch was dropped: its request was answered 400 after too many 429s
   * ({@code relay.delivery.throttled.policy=drop}).
   */
  public void throttledDropped(String tenant, int series) {
    tenants.meters(tenant).dropped("throttled").increment(series);
  }

  /** A tenant batch was not sent: an earlier attempt of the same request delivered it. */
  public void ledgerSkipped(String tenant, int series) {
    ledgerSkipped.increment(series);
  }

  /**
   * The tenant insight's active series estimate per tenant, reported as {@code
   * relay_tenant_active_series_estimate} for every tenant with meters of its own (NaN for one the
   * insight does not track). Set before the first request: tenants admitted earlier lack it.
   */
  public void activeSeries(ToDoubleFunction<String> estimate) {
    this.activeSeries = estimate;
  }

  /**
   * The tenant insight's new series per second per tenant, reported as {@code
   * relay_tenant_new_series_per_second} like {@link #activeSeries} (NaN for a tenant not tracked,
   * or tracked for less than a bucket). Set before the first request.
   */
  public void newSeries(ToDoubleFunction<String> perSecond) {
    this.newSeries = perSecond;
  }

  /** The tenant insight's per-metric gauges. */
  public InsightMetrics insightMetrics() {
    return insight;
  }

  /**
   * Registers {@code relay_lanes_new_refused_total}: tenant batches refused because their sender
   * caused too many new lanes.
   */
  public void newLaneBudget(NewLaneBudget budget) {
    MetricCatalogue.LANES_NEW_REFUSED.counter(registry, budget, NewLaneBudget::refused);
  }

  /** The on-disk queues of queue mode, whose sizes the {@code relay_queue_*} gauges report. */
  public void queues(QueueStore store) {
    queues.queues(store);
  }

  /** The meters of a tenant label {@link #tenants} admitted: only a tenant has gauges. */
  private TenantMeters newMeters(String label) {
    List<TenantMeters.TenantGauge> gauges = new ArrayList<>();
    if (!label.equals(OTHER_TENANT)) {
      gauges.add(lanes.laneState());
      gauges.addAll(queues.tenantGauges());
      ToDoubleFunction<String> estimate = activeSeries;
      if (estimate != null) {
        gauges.add(
            new TenantMeters.TenantGauge(MetricCatalogue.TENANT_ACTIVE_SERIES_ESTIMATE, estimate));
      }
      ToDoubleFunction<String> perSecond = newSeries;
      if (perSecond != null) {
        gauges.add(new TenantMeters.TenantGauge(MetricCatalogue.TENANT_NEW_SERIES, perSecond));
      }
    }
    return new TenantMeters(label, registry, gauges);
  }
}
